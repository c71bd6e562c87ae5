import Foundation
import Wear2MQTTTesting

/// The Python peer of `--profile realistic`: `python/peer.py`, the bridge people write with bleak and paho-mqtt,
/// run as a child process like the gateway and the relay, on the same simulator, bus and broker. It publishes the
/// gateway's heart-rate JSON on the gateway's topics, so the subscriber counts it like the gateway.
///
/// It does not measure Python in general: one interpreter, bleak's BlueZ backend and paho's network thread, as a
/// bridge of about a hundred lines uses them.
struct PythonPeer: Sendable {
    /// The interpreter itself, not a launcher: pyenv's `python3` is a shell script that execs it after a few
    /// hundred milliseconds of its own.
    let interpreter: String
    let script: String

    /// `python/peer.py` next to this source file: the bench runs from the checkout it was built in.
    static let defaultScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("python/peer.py").path

    /// Finds `python` on PATH, checks that it imports bleak and paho-mqtt, and resolves it to `sys.executable`.
    static func locate(python: String, script: String = defaultScript) throws -> PythonPeer {
        guard FileManager.default.isReadableFile(atPath: script) else { throw BenchError("no Python peer at \(script)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [python, "-c", "import sys, bleak, paho.mqtt.client; print(sys.executable)"]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let complaint = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let interpreter = printed.trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0, !interpreter.isEmpty else {
            throw BenchError("\(python) cannot run the Python peer (deploy/prerequisites bench installs them): "
                             + complaint.split(separator: "\n").suffix(2).joined(separator: " "))
        }
        return PythonPeer(interpreter: interpreter, script: script)
    }

    /// Starts the peer for the run's heart-rate sensors; bleak finds BlueZ on `DBUS_SYSTEM_BUS_ADDRESS`.
    func start(bus: String, port: Int, method: String, straps: Int, directory: TemporaryDirectory) throws -> ChildProcess {
        let devices = (0..<straps).map { "\(Workload.strapAddress($0))=\(Workload.strapID($0))" }.joined(separator: ",")
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus
        return try ChildProcess(executable: interpreter,
                                arguments: [script, "--port", String(port), "--base", "bench", "--method", method,
                                            "--devices", devices],
                                environment: environment,
                                outputPath: directory.file("peer.out"), errorPath: directory.file("peer.err"))
    }
}
