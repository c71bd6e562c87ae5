import Foundation
#if canImport(Testing)
import Testing
#endif

/// A process a test started, with its output captured to files, stopped by pid in `terminate` / `kill`.
/// Waiting polls with `Task.sleep` so no cooperative thread is blocked.
public final class ChildProcess: @unchecked Sendable {
    // @unchecked: Foundation.Process is not Sendable; this wrapper only reads its pid and status.
    public let process: Process
    public let outputPath: String
    public let errorPath: String

    public init(executable: String, arguments: [String], environment: [String: String]? = nil,
                outputPath: String, errorPath: String) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        process.standardInput = FileHandle.nullDevice
        self.outputPath = outputPath
        self.errorPath = errorPath
        try process.run()
        Self.recordStart(executable)
    }

    /// With `WEAR2MQTT_PROCESS_LOG` set to a file, appends the running test's id and the executable for every
    /// process started: how `docs/architecture.md` counts the tests that start processes.
    private static func recordStart(_ executable: String) {
        guard let log = ProcessInfo.processInfo.environment["WEAR2MQTT_PROCESS_LOG"] else { return }
        #if canImport(Testing)
        let test = Test.current.map { "\($0.id)" } ?? "(no test)"
        #else
        let test = "(no test)"
        #endif
        let line = Array("\(test)\t\(executable)\n".utf8)
        let fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    public var pid: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }
    public var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }
    public var errorOutput: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    /// Waits for the exit and returns the status, or nil if it is still running after `timeout`.
    @discardableResult
    public func waitForExit(timeout: Duration = .seconds(10)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        var zombieSince: ContinuousClock.Instant?
        while process.isRunning {
            if ContinuousClock.now >= deadline { return nil }
            // Foundation learns of an exit from SIGCHLD, which the kernel coalesces; with many children ending at
            // once on a loaded machine it can miss one and report it running for ever. A zombie has exited: after
            // a grace second its status comes from /proc, without reaping it behind Foundation's back.
            if let status = Self.zombieExitStatus(pid) {
                if let since = zombieSince, ContinuousClock.now - since > .seconds(1) { return status }
                zombieSince = zombieSince ?? .now
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return process.terminationStatus
    }

    /// The exit code (or terminating signal) of `pid` if it is a zombie, from `/proc/<pid>/stat`'s state and its
    /// last field, `exit_code` (Linux 3.5+, in waitpid's encoding).
    public static func zombieExitStatus(_ pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.first == "Z", let raw = fields.last.flatMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) else {
            return nil
        }
        let signal = raw & 0x7f
        return signal == 0 ? (raw >> 8) & 0xff : signal
    }

    public func signal(_ signal: Int32) {
        if process.isRunning { Foundation.kill(pid, signal) }
    }

    /// SIGTERM, then SIGKILL if it has not gone within `grace`.
    public func stop(grace: Duration = .seconds(5)) async {
        signal(SIGTERM)
        if await waitForExit(timeout: grace) == nil {
            signal(SIGKILL)
            await waitForExit(timeout: .seconds(5))
        }
    }

    deinit {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
    }
}

/// Polls `condition` until it holds or `timeout` passes.
public func eventually(timeout: Duration = .seconds(20), interval: Duration = .milliseconds(50),
                       _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}
