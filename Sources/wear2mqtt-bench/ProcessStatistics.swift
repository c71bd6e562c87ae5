#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// CPU time and memory of one process, from /proc (Linux only, like the rest of the bench).
struct ProcessStatistics: Sendable {
    /// user + system time, in seconds.
    var cpuSeconds: Double
    /// Peak resident set size since the process started (`VmHWM`), bytes.
    var peakResidentBytes: Int
    /// Resident set size now (`VmRSS`), bytes, and its two parts: anonymous memory (heap, stacks: `RssAnon`) and
    /// pages of mapped files (the executable and shared libraries: `RssFile`, shared with other processes).
    var residentBytes: Int
    var residentAnonymousBytes: Int
    var residentFileBytes: Int

    private static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// Reads `/proc/<pid>/stat` and `/proc/<pid>/status`; nil when the process is gone.
    static func read(pid: Int32) -> ProcessStatistics? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command name (which may contain spaces): state is field 3, utime 14, stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        func kilobytes(_ key: String) -> Int {
            for line in status.split(separator: "\n") where line.hasPrefix(key) {
                return Int(line.dropFirst(key.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? 0
            }
            return 0
        }
        return ProcessStatistics(cpuSeconds: (user + system) / ticksPerSecond,
                                 peakResidentBytes: kilobytes("VmHWM:") * 1024, residentBytes: kilobytes("VmRSS:") * 1024,
                                 residentAnonymousBytes: kilobytes("RssAnon:") * 1024,
                                 residentFileBytes: kilobytes("RssFile:") * 1024)
    }
}

/// CPU use of a set of processes over a measurement window, in percent of one core.
struct CPUWindow: Sendable {
    private var start: [String: (pid: Int32, cpu: Double)] = [:]
    private var startInstant = ContinuousClock.now

    /// Samples the processes at the start of the window.
    mutating func begin(_ processes: [String: Int32]) {
        startInstant = .now
        start = [:]
        for (name, pid) in processes {
            if let statistics = ProcessStatistics.read(pid: pid) { start[name] = (pid, statistics.cpuSeconds) }
        }
    }

    /// Percent of one core each process used since `begin`, by name: its CPU time over `seconds`, by default
    /// the time since `begin`.
    func end(over seconds: Double? = nil) -> [String: Double] {
        let elapsed = seconds ?? (ContinuousClock.now - startInstant).seconds
        var result: [String: Double] = [:]
        for (name, sample) in start {
            guard let now = ProcessStatistics.read(pid: sample.pid), elapsed > 0 else { continue }
            result[name] = (now.cpuSeconds - sample.cpu) / elapsed * 100
        }
        return result
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
