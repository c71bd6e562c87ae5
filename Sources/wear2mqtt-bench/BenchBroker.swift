#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Wear2MQTTTesting

/// The broker of a benchmark: mosquitto on a free loopback port, like the tests' `MosquittoBroker`, with the
/// one setting a latency measurement needs: `set_tcp_nodelay`.
///
/// mosquitto leaves Nagle's algorithm on for the sockets it writes to (`set_tcp_nodelay false` by default).
/// On loopback, where a segment can hold 64 KiB, a small PUBLISH to a subscriber that never writes back then
/// waits for the subscriber's delayed ACK (up to 40 ms) whenever an earlier one is unacknowledged: a tail of
/// 30–45 ms that belongs to the broker's configuration, not to whoever published. `--broker-nagle` keeps
/// mosquitto's default to show it.
final class BenchBroker: Sendable {
    let port: Int
    let directory: TemporaryDirectory
    let noDelay: Bool
    private let child: ChildProcess

    init(noDelay: Bool) async throws {
        directory = try TemporaryDirectory(prefix: "wear2mqtt-bench-mosquitto")
        ChildProcesses.shared.register(directory: directory.path)
        port = try FreePort.loopback()
        self.noDelay = noDelay
        let lines = ["listener \(port) 127.0.0.1", "allow_anonymous true", "log_dest stderr", "log_type error",
                     "log_type warning", "max_queued_messages 100000", "set_tcp_nodelay \(noDelay)",
                     // Run as whoever runs the bench: as root, mosquitto would otherwise switch to `mosquitto`.
                     "user \(String(cString: getpwuid(getuid()).pointee.pw_name))"]
        let configuration = try directory.write("mosquitto.conf", lines.joined(separator: "\n") + "\n")
        let executable = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let executable else { throw BenchError("mosquitto is not installed (apt-get install mosquitto mosquitto-clients)") }
        child = try ChildProcess(executable: executable, arguments: ["-c", configuration],
                                 outputPath: directory.file("out.log"), errorPath: directory.file("err.log"))
        ChildProcesses.shared.register(child.pid)
        let port = port
        guard await eventually(timeout: .seconds(10), { FreePort.isListening(port: port) }) else {
            throw BenchError("mosquitto did not start: \(child.errorOutput)")
        }
    }

    var pid: Int32? { child.pid }

    func stop() async {
        await child.stop()
        ChildProcesses.shared.unregister(child.pid)
        directory.remove()
    }
}
