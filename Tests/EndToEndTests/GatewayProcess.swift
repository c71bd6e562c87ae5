import Foundation
import Wear2MQTTTesting

/// The built `wear2mqtt` executable run as a child process with a configuration written for the test.
struct GatewayProcess {
    let child: ChildProcess
    let directory: TemporaryDirectory

    /// The executable sits next to the test bundle in SwiftPM's build folder.
    static var executablePath: String {
        let bundle = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: bundle).deletingLastPathComponent().appendingPathComponent("wear2mqtt").path
    }

    /// A configuration for a broker on `port`, with a fast reconnect and a short keepalive (a lost broker is
    /// noticed in seconds) so tests need not wait. `mqttLines` go into the `mqtt:` section (indented as there),
    /// `extra` at the top level.
    static func configuration(port: Int, stateDirectory: String, baseTopic: String, host: String = "127.0.0.1",
                              keepaliveSeconds: Int = 5, mqttLines: [String] = [], extra: String = "") -> String {
        """
        gateway:
          id: e2e
          state_dir: \(stateDirectory)
          log_level: debug
        mqtt:
          host: \(host)
          port: \(port)
          base_topic: \(baseTopic)
          keepalive_s: \(keepaliveSeconds)
          reconnect:
            min_delay_s: 0.1
            max_delay_s: 0.5
        \(mqttLines.map { "  " + $0 }.joined(separator: "\n"))
        \(extra)
        """
    }

    /// More environment for every gateway a test starts inside `withValue`, however deep (a `Stack`'s, its restarts):
    /// an `LD_PRELOAD` shim. A task local, so tests running in parallel do not see each other's.
    @TaskLocal static var extraEnvironment: [String: String] = [:]

    static func start(arguments: [String], in directory: TemporaryDirectory, name: String = "gateway",
                      environment: [String: String] = [:]) throws -> GatewayProcess {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("WEAR2MQTT_") }
        env.merge(extraEnvironment) { $1 }
        env.merge(environment) { $1 }
        let child = try ChildProcess(executable: executablePath, arguments: arguments, environment: env,
                                     outputPath: directory.file("\(name).out"), errorPath: directory.file("\(name).err"))
        return GatewayProcess(child: child, directory: directory)
    }

    /// Runs `wear2mqtt` to completion and returns its exit status and stderr.
    static func runToExit(arguments: [String], in directory: TemporaryDirectory, name: String = "once",
                          environment: [String: String] = [:]) async throws -> (status: Int32?, stderr: String, stdout: String) {
        let process = try start(arguments: arguments, in: directory, name: name, environment: environment)
        let status = await process.child.waitForExit(timeout: .seconds(20))
        if status == nil { process.child.signal(SIGKILL) }
        return (status, process.child.errorOutput, process.child.output)
    }
}
