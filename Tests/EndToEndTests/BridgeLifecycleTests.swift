import Foundation
import Testing
import Wear2MQTTTesting

/// The gateway process against a real broker: what `bridge/state` says as it starts, dies and stops.
@Suite(.timeLimit(.minutes(3)))
struct BridgeLifecycleTests {
    let base = "e2e/\(UUID().uuidString.prefix(8))"

    func startGateway(broker: MosquittoBroker, directory: TemporaryDirectory, name: String = "gateway",
                      mqttLines: [String] = [], host: String = "127.0.0.1",
                      environment: [String: String] = [:]) throws -> GatewayProcess {
        let config = try directory.write("\(name).yaml", GatewayProcess.configuration(
            port: broker.port, stateDirectory: directory.file("state-\(name)"), baseTopic: base, host: host,
            mqttLines: mqttLines))
        return try GatewayProcess.start(arguments: ["run", "--config", config], in: directory, name: name,
                                        environment: environment)
    }

    func retainedState(_ broker: MosquittoBroker) async throws -> String? {
        try await MosquittoClients.receive(port: broker.port, topic: "\(base)/bridge/state", timeoutSeconds: 2).first
    }

    @Test func bridgeStateIsOnlineAndRetainedAfterStartAndBridgeInfoNamesTheGateway() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let gateway = try startGateway(broker: broker, directory: directory)

        // A subscriber that connects afterwards still sees it: it is retained.
        #expect(try await eventually { try await retainedState(broker) == "\(base)/bridge/state {\"state\":\"online\"}" })
        let info = try #require(try await MosquittoClients.receive(port: broker.port, topic: "\(base)/bridge/info").first)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(info.dropFirst("\(base)/bridge/info ".count).utf8)) as? [String: Any])
        #expect(json["gateway_id"] as? String == "e2e")
        #expect(json["version"] as? String != nil)

        await gateway.child.stop()
        await broker.remove()
    }

    @Test func killedWithSIGKILLTheWillSaysOffline() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let gateway = try startGateway(broker: broker, directory: directory)
        #expect(try await eventually { try await retainedState(broker)?.hasSuffix(#"{"state":"online"}"#) == true })

        gateway.child.signal(SIGKILL)
        await gateway.child.waitForExit()
        #expect(try await eventually { try await retainedState(broker) == "\(base)/bridge/state {\"state\":\"offline\"}" })
        await broker.remove()
    }

    @Test func sigtermPublishesOfflineAndExitsCleanlyWithinFiveSeconds() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let gateway = try startGateway(broker: broker, directory: directory)
        #expect(try await eventually { try await retainedState(broker)?.hasSuffix(#"{"state":"online"}"#) == true })

        let stopping = ContinuousClock.now
        gateway.child.signal(SIGTERM)
        let status = await gateway.child.waitForExit(timeout: .seconds(5))
        #expect(status == 0)
        #expect(ContinuousClock.now - stopping < .seconds(5))
        #expect(try await retainedState(broker) == "\(base)/bridge/state {\"state\":\"offline\"}")
        await broker.remove()
    }

    @Test func afterABrokerRestartTheGatewayReconnectsAndRepublishesItsRetainedState() async throws {
        let broker = try MosquittoBroker() // no persistence: the restarted broker has forgotten everything
        try await broker.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let gateway = try startGateway(broker: broker, directory: directory)
        #expect(try await eventually { try await retainedState(broker)?.hasSuffix(#"{"state":"online"}"#) == true })

        await broker.kill()
        try await broker.start()
        #expect(try await eventually(timeout: .seconds(5)) {
            try await retainedState(broker) == "\(base)/bridge/state {\"state\":\"online\"}"
        })
        #expect(gateway.child.isRunning)
        await gateway.child.stop()
        await broker.remove()
    }

    @Test func theRightPasswordConnectsAndAWrongOneExitsWithTheAuthenticationCode() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let passwords = try await MosquittoClients.passwordFile(in: directory, user: "gw", password: "right-one")
        let broker = try MosquittoBroker(passwordFile: passwords)
        try await broker.start()
        let passwordFile = try directory.write("mqtt-password", "right-one\n")
        let credentials = ["username: gw", "password_file: \(passwordFile)"]

        let connected = try startGateway(broker: broker, directory: directory, name: "right", mqttLines: credentials)
        #expect(await eventually { connected.child.errorOutput.contains("connected to the MQTT broker") })
        await connected.child.stop()
        #expect(!connected.child.errorOutput.contains("right-one"))

        // The environment's password wins over the file's; this one is wrong.
        let wrong = try startGateway(broker: broker, directory: directory, name: "wrong", mqttLines: credentials,
                                     environment: ["WEAR2MQTT_MQTT_PASSWORD": "not-it"])
        #expect(await wrong.child.waitForExit(timeout: .seconds(10)) == 3)
        #expect(wrong.child.errorOutput.contains("refused the credentials"))
        #expect(!wrong.child.errorOutput.contains("not-it"))

        let anonymous = try startGateway(broker: broker, directory: directory, name: "anonymous")
        #expect(await anonymous.child.waitForExit(timeout: .seconds(10)) == 3)
        await broker.remove()
    }

    @Test func aBrokerCertificateFromAnotherCAIsRefusedWithTheTLSCode() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let certificates = try await TestCertificates.make(in: directory)
        let broker = try MosquittoBroker(tls: .init(caFile: certificates.caFile, certificateFile: certificates.serverCertificate,
                                                    keyFile: certificates.serverKey, requireClientCertificate: false))
        try await broker.start()
        func tls(_ ca: String) -> [String] { ["tls:", "  enabled: true", "  ca_file: \(ca)"] }

        let right = try startGateway(broker: broker, directory: directory, name: "right", mqttLines: tls(certificates.caFile),
                                     host: "localhost")
        #expect(await eventually { right.child.errorOutput.contains("connected to the MQTT broker") })
        await right.child.stop()

        let wrong = try startGateway(broker: broker, directory: directory, name: "wrong",
                                     mqttLines: tls(certificates.otherCAFile), host: "localhost")
        #expect(await wrong.child.waitForExit(timeout: .seconds(10)) == 4)
        #expect(wrong.child.errorOutput.contains("certificate verify failed"))
        await broker.remove()
    }
}
