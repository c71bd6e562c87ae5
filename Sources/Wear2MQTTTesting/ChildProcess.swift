#if canImport(Glibc)
import Glibc
#endif
import Foundation
import MQTT
import Synchronization
#if canImport(Testing)
import Testing
#endif

/// A process a test started, with its output captured to files, stopped by pid in `terminate` / `kill`.
/// Waiting for the exit polls with `Task.sleep` so no cooperative thread is blocked; waiting on its log is woken by
/// each write (`waitForErrorOutput`).
///
/// Started with `posix_spawn`, not Foundation's `Process`: on Linux `Process.run()` reads `/proc/self/fd` with a
/// 256-byte copy of each directory entry that can run off the end of glibc's buffer and crash the whole test
/// process (swift-corelibs-foundation PR #5472, seen here as a SIGSEGV in `Process.run` with many suites
/// spawning at once). The child's status is reaped here with `waitpid(pid, WNOHANG)`, for this pid only.
public final class ChildProcess: @unchecked Sendable {
    // @unchecked: the only mutable state, the reaped exit status, is behind a Mutex.
    public let pid: Int32
    public let outputPath: String
    public let errorPath: String
    private let exitStatus = Mutex<Int32?>(nil)

    public init(executable: String, arguments: [String], environment: [String: String]? = nil,
                outputPath: String, errorPath: String) throws {
        self.outputPath = outputPath
        self.errorPath = errorPath
        pid = try Self.spawn(executable: executable, arguments: arguments, environment: environment,
                             outputPath: outputPath, errorPath: errorPath)
        Self.recordStart(executable)
    }

    /// Spawns with stdin from /dev/null, stdout and stderr to the files (truncated), every other descriptor closed
    /// and every signal at its default (an ignored SIGPIPE would otherwise be inherited).
    private static func spawn(executable: String, arguments: [String], environment: [String: String]?,
                              outputPath: String, errorPath: String) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        _ = posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        _ = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        _ = posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        _ = posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard let closeFrom = closeFromAction else { throw TestSetupError("posix_spawn_file_actions_addclosefrom_np is missing (glibc 2.34+)") }
        _ = closeFrom(&actions, 3)
        var attributes = posix_spawnattr_t()
        _ = posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigfillset(&defaults)
        var none = sigset_t()
        sigemptyset(&none)
        _ = posix_spawnattr_setsigdefault(&attributes, &defaults)
        _ = posix_spawnattr_setsigmask(&attributes, &none)
        _ = posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let variables = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { variables.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, variables)
        guard result == 0 else {
            throw TestSetupError("cannot start \(executable): \(String(cString: strerror(result)))")
        }
        return pid
    }

    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    /// glibc has it since 2.34, but its header hides it from Swift's Glibc module.
    private static let closeFromAction: CloseFrom? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: CloseFrom.self)
    }()

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

    /// The exit code, or the signal that ended it; nil while it runs. Reaps the child when it has ended.
    private func reap() -> Int32? {
        exitStatus.withLock { cached in
            if let cached { return cached }
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == -1 && errno == ECHILD {
                // Someone else reaped it (it is not running, its status is lost): say so rather than wait for ever.
                cached = -1
                return cached
            }
            guard reaped == pid else { return nil }
            let signal = status & 0x7f
            cached = signal == 0 ? (status >> 8) & 0xff : signal
            return cached
        }
    }

    public var isRunning: Bool { reap() == nil }
    public var output: String { readWholeTextFile(atPath: outputPath) ?? "" }
    public var errorOutput: String { readWholeTextFile(atPath: errorPath) ?? "" }

    /// Waits for the exit and returns the status, or nil if it is still running after `timeout`.
    @discardableResult
    public func waitForExit(timeout: Duration = .seconds(10)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let status = reap() { return status }
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// True as soon as `condition` holds for the child's stderr (its log), checked now and after each write to it;
    /// false if it still does not after `timeout`, a failure guard in real time.
    public func waitForErrorOutput(timeout: Duration = .seconds(20), _ condition: (String) -> Bool) async throws -> Bool {
        let changes = ChangeNotifier()
        let watcher = try FileWriteWatcher(path: errorPath) { changes.changed() }
        defer { watcher.stop() }
        return await changes.until(timeout: timeout) { condition(errorOutput) }
    }

    /// The exit code (or terminating signal) of any `pid` if it is a zombie (a child another API started), from `/proc/<pid>/stat`'s state and its
    /// last field, `exit_code` (Linux 3.5+, in waitpid's encoding).
    public static func zombieExitStatus(_ pid: Int32) -> Int32? {
        guard let stat = readWholeTextFile(atPath: "/proc/\(pid)/stat"),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.first == "Z", let raw = fields.last.flatMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) else {
            return nil
        }
        let signal = raw & 0x7f
        return signal == 0 ? (raw >> 8) & 0xff : signal
    }

    public func signal(_ signal: Int32) {
        if isRunning { Foundation.kill(pid, signal) }
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
        if isRunning {
            Foundation.kill(pid, SIGKILL)  // reaped if it is gone already, else left a zombie: never a blocking wait
            _ = reap()
        }
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
