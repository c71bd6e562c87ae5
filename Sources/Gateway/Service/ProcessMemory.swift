import Glibc
import FoundationEssentials
import MQTT

/// The process's resident set size, from /proc (Linux).
enum ProcessMemory {
    static var residentBytes: Int64? {
        guard let text = readWholeTextFile(atPath: "/proc/self/statm") else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int64(fields[1]) else { return nil }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }
}
