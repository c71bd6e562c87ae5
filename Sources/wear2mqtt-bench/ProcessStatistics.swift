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

/// What every thread of one process did, from `/proc/<pid>/task/<tid>/{status,schedstat}`: context switches
/// (`voluntary_ctxt_switches`: the thread blocked, e.g. in poll or on a lock; `nonvoluntary_ctxt_switches`: the
/// scheduler took the core away) and time on a core in nanoseconds (the first field of `schedstat`, exact where
/// utime + stime count 10 ms ticks). Per thread id, so a window's figures can be taken thread by thread.
struct ThreadCounters: Sendable {
    struct Counts: Sendable {
        var voluntary: UInt64
        var involuntary: UInt64
        var runtimeNanoseconds: UInt64
    }

    var threads: [Int32: Counts]

    /// Reads every thread of `pid` (only those whose kernel name, `comm`, is `named`, when given); empty when the
    /// process is gone.
    static func read(pid: Int32, named wanted: String? = nil) -> ThreadCounters {
        var threads: [Int32: Counts] = [:]
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for name in tasks {
            if let wanted {
                let comm = (try? String(contentsOfFile: "/proc/\(pid)/task/\(name)/comm", encoding: .utf8)) ?? ""
                guard comm.trimmingCharacters(in: .newlines) == wanted else { continue }
            }
            guard let tid = Int32(name),
                  let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(name)/status", encoding: .utf8) else { continue }
            func value(_ key: String) -> UInt64 {
                for line in status.split(separator: "\n") where line.hasPrefix(key) {
                    return UInt64(line.dropFirst(key.count).trimmingCharacters(in: .whitespaces)) ?? 0
                }
                return 0
            }
            let schedstat = (try? String(contentsOfFile: "/proc/\(pid)/task/\(name)/schedstat", encoding: .utf8)) ?? ""
            let runtime = schedstat.split(separator: " ").first.flatMap { UInt64($0) } ?? 0
            threads[tid] = Counts(voluntary: value("voluntary_ctxt_switches:"),
                                  involuntary: value("nonvoluntary_ctxt_switches:"), runtimeNanoseconds: runtime)
        }
        return ThreadCounters(threads: threads)
    }

    /// What happened between `start` and `self`: threads present at both ends by their difference, threads that
    /// started in between by their whole count. Threads that ended in between are missing from `self` and so
    /// from the result (`/proc` keeps no per-thread figures of exited threads).
    func since(_ start: ThreadCounters) -> ThreadActivity {
        var activity = ThreadActivity(threads: threads.count)
        for (tid, now) in threads {
            let before = start.threads[tid] ?? Counts(voluntary: 0, involuntary: 0, runtimeNanoseconds: 0)
            activity.voluntaryContextSwitches += now.voluntary &- min(before.voluntary, now.voluntary)
            activity.involuntaryContextSwitches += now.involuntary &- min(before.involuntary, now.involuntary)
            activity.runtimeNanoseconds += now.runtimeNanoseconds &- min(before.runtimeNanoseconds, now.runtimeNanoseconds)
        }
        activity.threadsEnded = start.threads.keys.filter { threads[$0] == nil }.count
        return activity
    }
}

/// One process's threads over a measurement window: context switches and time on a core, summed over threads.
struct ThreadActivity: Codable, Sendable, Equatable {
    /// Threads at the end of the window.
    var threads: Int
    var voluntaryContextSwitches: UInt64 = 0
    var involuntaryContextSwitches: UInt64 = 0
    var runtimeNanoseconds: UInt64 = 0
    /// Threads that existed at the start and not at the end (their share is missing from the sums).
    var threadsEnded = 0
}
