import Glibc
import FoundationEssentials
import MQTT

/// The process's CPU time, from /proc/self/stat (Linux), for `process_cpu_seconds_total`.
enum ProcessStatistics {
    /// User plus system time in seconds; nil where /proc is not there.
    static var cpuSeconds: Double? {
        guard let text = readWholeTextFile(atPath: "/proc/self/stat"),
              let end = text.lastIndex(of: ")") else { return nil }
        // After the command name (which may contain spaces, hence the last ")"): state is field 3, utime 14, stime 15.
        let fields = text[text.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
