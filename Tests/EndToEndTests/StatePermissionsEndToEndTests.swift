import Foundation
import Testing
import Wear2MQTTTesting

/// Issue 24: the state folder and `spool/` followed the process umask (world-writable under umask 000). The gateway
/// runs here under `umask 000`, set by a shell that then execs it, so the umask of the test process (shared by the
/// tests running beside this one) is never changed.
@Suite
struct StatePermissionsEndToEndTests {
    let base = "e2e/\(UUID().uuidString.prefix(8))"

    static func mode(_ path: String) -> mode_t? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return status.st_mode & 0o7777
    }

    /// The gateway connected to `broker` with `state` as `gateway.state_dir`, run under umask 000.
    func startUnderUmaskZero(broker: MosquittoBroker, directory: TemporaryDirectory, state: String) throws -> ChildProcess {
        let config = try directory.write("gateway.yaml", GatewayProcess.configuration(
            port: broker.port, stateDirectory: state, baseTopic: base))
        let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("WEAR2MQTT_") }
        return try ChildProcess(
            executable: "/bin/sh",
            arguments: ["-c", #"umask 000 && exec "$0" "$@""#, GatewayProcess.executablePath, "run", "--config", config],
            environment: environment, outputPath: directory.file("gateway.out"), errorPath: directory.file("gateway.err"))
    }

    @Test func underUmask000TheStateFolderTheSpoolAndTheirFilesAreTheOwnersAlone() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = directory.file("var/lib/wear2mqtt")
        let gateway = try startUnderUmaskZero(broker: broker, directory: directory, state: state)
        #expect(try await gateway.waitForErrorOutput { $0.contains("connected to the MQTT broker") }, "\(gateway.errorOutput.suffix(600))")
        await gateway.stop()
        await broker.remove()

        #expect(Self.mode(directory.file("var")) == 0o700, "a missing parent is created private too")
        #expect(Self.mode(state) == 0o700)
        #expect(Self.mode(state + "/spool") == 0o700)
        let files = try FileManager.default.contentsOfDirectory(atPath: state + "/spool")
        for name in files { #expect(Self.mode(state + "/spool/" + name) == 0o600, "\(name)") }
    }

    @Test func aStateFolderOpenToOthersIsTightenedWithAWarning() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = directory.file("state")
        #expect(mkdir(state, 0o777) == 0 && chmod(state, 0o777) == 0)
        #expect(mkdir(state + "/spool", 0o777) == 0 && chmod(state + "/spool", 0o777) == 0)
        let gateway = try startUnderUmaskZero(broker: broker, directory: directory, state: state)
        #expect(try await gateway.waitForErrorOutput { $0.contains("connected to the MQTT broker") }, "\(gateway.errorOutput.suffix(600))")
        await gateway.stop()
        await broker.remove()

        #expect(Self.mode(state) == 0o700 && Self.mode(state + "/spool") == 0o700)
        #expect(gateway.errorOutput.contains("gateway.state_dir was open to other users; its mode is now 0700"))
        #expect(gateway.errorOutput.contains("the durable spool's folder was open to other users"))
    }
}
