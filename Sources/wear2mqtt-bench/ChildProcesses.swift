#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Synchronization

/// Every process the bench started, by pid, and every directory it made, so that an error, Ctrl-C or SIGTERM
/// still stops them all (by pid, never by name) and leaves no files behind.
final class ChildProcesses: Sendable {
    static let shared = ChildProcesses()

    private let pids = Mutex<Set<Int32>>([])
    private let directories = Mutex<[String]>([])

    func register(_ pid: Int32?) {
        guard let pid, pid > 0 else { return }
        pids.withLock { _ = $0.insert(pid) }
    }

    func unregister(_ pid: Int32?) {
        guard let pid else { return }
        pids.withLock { _ = $0.remove(pid) }
    }

    func register(directory: String) {
        directories.withLock { $0.append(directory) }
    }

    /// SIGTERM to every registered process, SIGKILL to those still there a second later; removes the directories.
    func terminateAll(keepDirectories: Bool = false) {
        let running = pids.withLock { pids in defer { pids = [] }; return pids }
        for pid in running { kill(pid, SIGTERM) }
        let deadline = Date().addingTimeInterval(1)
        var remaining = running
        while !remaining.isEmpty && Date() < deadline {
            var status: Int32 = 0
            remaining = remaining.filter { pid in
                waitpid(pid, &status, WNOHANG) == 0 && kill(pid, 0) == 0
            }
            if !remaining.isEmpty { usleep(20_000) }
        }
        for pid in remaining { kill(pid, SIGKILL) }
        if !keepDirectories {
            for directory in directories.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: directory) }
        }
    }

    /// On SIGINT or SIGTERM: stop every child, clean up and exit with 128 + the signal. Keep the returned
    /// sources alive for as long as the handlers should work.
    func installSignalHandlers() -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { [self] in
                FileHandle.standardError.write(Data("\nwear2mqtt-bench: interrupted; stopping the processes it started\n".utf8))
                terminateAll()
                exit(128 + signalNumber)
            }
            source.resume()
            return source
        }
    }
}

/// The path of this executable, and of the gateway built next to it.
enum BuildProducts {
    static var benchExecutable: String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return CommandLine.arguments[0] }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static var directory: String { (benchExecutable as NSString).deletingLastPathComponent }

    static var gatewayExecutable: String { directory + "/wear2mqtt" }

    /// SwiftPM puts debug builds in `…/debug`: numbers from those measure the optimizer's absence.
    static var isDebugDirectory: Bool { (directory as NSString).lastPathComponent == "debug" }

    static var benchIsDebugBuild: Bool {
        #if DEBUG
        true
        #else
        false
        #endif
    }
}
