import Foundation

/// The broker's own command-line clients, used as independent witnesses of what the gateway published:
/// a test that checks our MQTT client with our MQTT client could share its mistakes.
public enum MosquittoClients {
    /// Receives up to `count` messages on `topic` (retained ones included) and returns them as
    /// "topic payload" lines. Stops after `timeout` seconds with what arrived.
    public static func receive(port: Int, topic: String, count: Int = 1, timeoutSeconds: Int = 10,
                               extraArguments: [String] = []) async throws -> [String] {
        let directory = try TemporaryDirectory(prefix: "mosquitto-sub")
        defer { directory.remove() }
        let child = try ChildProcess(
            executable: "/usr/bin/mosquitto_sub",
            arguments: ["-h", "127.0.0.1", "-p", String(port), "-t", topic, "-C", String(count),
                        "-W", String(timeoutSeconds), "-v"] + extraArguments,
            outputPath: directory.file("out"), errorPath: directory.file("err"))
        await child.waitForExit(timeout: .seconds(timeoutSeconds + 5))
        return child.output.split(separator: "\n").map(String.init)
    }

    /// Publishes one message with mosquitto_pub (the payload from `message`, or from `extraArguments` such
    /// as `-f FILE` when `message` is nil).
    public static func publish(port: Int, topic: String, message: String?, extraArguments: [String] = []) async throws {
        let directory = try TemporaryDirectory(prefix: "mosquitto-pub")
        defer { directory.remove() }
        let child = try ChildProcess(
            executable: "/usr/bin/mosquitto_pub",
            arguments: ["-h", "127.0.0.1", "-p", String(port), "-t", topic] + (message.map { ["-m", $0] } ?? []) + extraArguments,
            outputPath: directory.file("out"), errorPath: directory.file("err"))
        await child.waitForExit(timeout: .seconds(10))
    }

    /// A long-running mosquitto_sub that writes every message it gets as a "topic payload" line (`MosquittoWitness`
    /// reads them as they are written).
    public static func subscriber(port: Int, topics: [String], arguments: [String] = [],
                                  directory: TemporaryDirectory, name: String = "sub") throws -> ChildProcess {
        try ChildProcess(
            executable: "/usr/bin/mosquitto_sub",
            arguments: ["-h", "127.0.0.1", "-p", String(port), "-v"] + topics.flatMap { ["-t", $0] } + arguments,
            outputPath: directory.file("\(name).out"), errorPath: directory.file("\(name).err"))
    }

    /// Makes a mosquitto password file with one user.
    public static func passwordFile(in directory: TemporaryDirectory, user: String, password: String) async throws -> String {
        let path = directory.file("passwd")
        let child = try ChildProcess(executable: "/usr/bin/mosquitto_passwd", arguments: ["-b", "-c", path, user, password],
                                     outputPath: directory.file("passwd.out"), errorPath: directory.file("passwd.err"))
        // Generous: on two loaded cores a short-lived process can take seconds to be reaped.
        let status = await child.waitForExit(timeout: .seconds(30))
        guard status == 0 else {
            throw TestSetupError("mosquitto_passwd \(status.map { "exited with \($0)" } ?? "did not exit in 30 s"): \(child.errorOutput)")
        }
        return path
    }
}

public struct TestSetupError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
