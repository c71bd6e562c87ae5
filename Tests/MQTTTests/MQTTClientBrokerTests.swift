import Foundation
import MQTT
import Synchronization
import Testing
import Wear2MQTTTesting

/// The MQTT client against a real mosquitto on a loopback port; mosquitto_sub and mosquitto_pub are the
/// independent witnesses. The clients run on the test's event loop, whose iterations wake the waits on what they know.
@Suite(.timeLimit(.minutes(3)))
struct MQTTClientBrokerTests {
    let clients: ClientLoop

    init() throws { clients = try ClientLoop() }

    func configuration(port: Int, spool: String, clientID: String = "test-\(UUID().uuidString.prefix(8))",
                       host: String = "127.0.0.1") -> MQTTClientConfiguration {
        MQTTClientConfiguration(
            host: host, port: port, clientID: clientID, keepAliveSeconds: 10,
            reconnect: ReconnectBackoff(minimumDelay: .milliseconds(100), maximumDelay: .milliseconds(500)),
            spoolDirectory: spool)
    }

    /// Runs the client in a task and waits for its first connection (counted by `connections`, when given).
    func started(_ client: MQTTClient, connections: Connections? = nil) async throws -> Task<Void, Error> {
        let connections = connections ?? Connections(client)
        let task = Task { try await client.run() }
        try #require(await connections.until(1), "the client did not connect")
        return task
    }

    @Test func aRequestWithResponseTopicAndCorrelationDataArrivesWithBoth() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let client = try clients.client(configuration(port: broker.port, spool: directory.file("spool")))
        try client.subscribe("test/request/#")
        let task = try await started(client)
        var iterator = try await client.subscribed(probing: "test/request/probe")

        try await MosquittoClients.publish(port: broker.port, topic: "test/request/find", message: #"{"level":"high"}"#,
                                           extraArguments: ["-V", "5", "-D", "publish", "response-topic", "test/reply",
                                                            "-D", "publish", "correlation-data", "abc123"])
        let message = try #require(await iterator.next())
        #expect(message.topic == "test/request/find")
        #expect(message.text == #"{"level":"high"}"#)
        #expect(message.properties.responseTopic == "test/reply")
        #expect(message.properties.correlationData == Array("abc123".utf8))

        // Retained: the witness gets the reply whether it subscribes before or after it is published.
        async let reply = MosquittoClients.receive(port: broker.port, topic: "test/reply", timeoutSeconds: 5,
                                                   extraArguments: ["-V", "5", "-F", "%t %p %C"])
        client.publish(OutgoingMessage(topic: "test/reply", text: #"{"status":"ok"}"#, qos: .atLeastOnce, retain: true,
                                       properties: MQTTProperties(correlationData: message.properties.correlationData)))
        let lines = try await reply
        #expect(lines.first?.hasPrefix(#"test/reply {"status":"ok"}"#) == true)

        await client.close()
        try await task.value
        await broker.remove()
    }

    /// A close after the connection ended (a hang guard's close, then the owner's) was queued for a loop that would
    /// never run again and never returned: the flood test under AddressSanitizer waited on it for ever.
    @Test func aCloseOrADurablePublishAfterTheEndReturnsAtOnce() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let client = try clients.client(configuration(port: broker.port, spool: directory.file("spool")))
        let task = try await started(client)
        await client.close(timeout: .milliseconds(100))
        try await task.value
        await client.close(timeout: .seconds(1))
        await client.close()
        await #expect(throws: MQTTError.closed) {
            try await client.publishDurable(OutgoingMessage(topic: "test/late", text: "{}", qos: .atLeastOnce))
        }
        await broker.remove()
    }

    /// How long it waits between attempts is the link state machine's, checked without a clock
    /// (`MQTTLinkStateMachineTests.backoffGrowsAndResets`); here, that a real broker's return is met.
    @Test func afterABrokerRestartItReconnectsAndSubscriptionsWorkAgain() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let client = try clients.client(configuration(port: broker.port, spool: directory.file("spool")))
        let connections = Connections(client)
        try client.subscribe("test/in")
        let task = try await started(client, connections: connections)

        await broker.kill()
        #expect(await clients.until { !client.statistics.connected })
        try await broker.start()
        #expect(await connections.until(2, timeout: .seconds(30)))
        #expect(client.statistics.connected && connections.made == 2)

        var iterator = try await client.subscribed(probing: "test/in")
        try await MosquittoClients.publish(port: broker.port, topic: "test/in", message: "after restart", extraArguments: ["-q", "1"])
        #expect(await iterator.next()?.text == "after restart")

        await client.close()
        try await task.value
        await broker.remove()
    }

    @Test func thousandDurableMessagesSurviveABrokerOutageAndAClientRestartInOrderAndOnce() async throws {
        let broker = try MosquittoBroker(persistence: true)
        try await broker.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // A persistent QoS 1 subscriber: the broker keeps its session across the restart.
        let subscriber = try MosquittoClients.subscriber(
            port: broker.port, topics: ["test/durable/#"],
            arguments: ["-q", "1", "-c", "-i", "witness-\(UUID().uuidString.prefix(8))"], directory: directory)
        // eventually: mosquitto_sub (a child process) subscribes in its own time and writes what it gets to a file.
        try #require(await eventually {
            try await MosquittoClients.publish(port: broker.port, topic: "test/durable/probe", message: "probe", extraArguments: ["-q", "1"])
            return subscriber.output.contains("probe")
        })

        let spool = directory.file("spool")
        let first = try clients.client(configuration(port: broker.port, spool: spool, clientID: "gw-durable"))
        let firstTask = try await started(first)
        await broker.stop()
        #expect(await clients.until { !first.statistics.connected })
        for index in 0..<500 {
            try await first.publishDurable(OutgoingMessage(topic: "test/durable/record", text: "\(index)", qos: .atLeastOnce))
        }
        await first.close(timeout: .seconds(1))
        try await firstTask.value

        // The gateway restarts while the broker is still away.
        let second = try clients.client(configuration(port: broker.port, spool: spool, clientID: "gw-durable"))
        let secondTask = Task { try await second.run() }
        for index in 500..<1000 {
            try await second.publishDurable(OutgoingMessage(topic: "test/durable/record", text: "\(index)", qos: .atLeastOnce))
        }
        await clients.barrier()
        #expect(second.statistics.spoolPending == 1000)
        // Behind the records in the spool: once it arrives, every record and any duplicate of one has.
        try await second.publishDurable(OutgoingMessage(topic: "test/durable/end", text: "end", qos: .atLeastOnce))
        try await broker.start()

        // eventually: mosquitto_sub (a child process) writes what it gets to a file.
        let delivered = await eventually(timeout: .seconds(30)) { subscriber.output.contains("test/durable/end end") }
        let records = subscriber.output.split(separator: "\n").filter { $0.hasPrefix("test/durable/record ") }
            .map { String($0.dropFirst("test/durable/record ".count)) }
        #expect(delivered)
        #expect(records == (0..<1000).map(String.init))
        #expect(await clients.until { second.statistics.spoolPending == 0 })

        await second.close()
        try await secondTask.value
        await subscriber.stop()
        await broker.remove()
    }

    @Test func qos0MessagesWaitInTheRingWhileTheBrokerIsAwayAndTheOldestAreDropped() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var settings = configuration(port: broker.port, spool: directory.file("spool"))
        settings.offlineQueueCapacity = 5
        let client = try clients.client(settings)
        let task = try await started(client)
        await broker.kill()
        #expect(await clients.until { !client.statistics.connected })
        for index in 0..<8 { client.publish(OutgoingMessage(topic: "test/sample", text: "\(index)")) }
        await clients.barrier()
        #expect(client.statistics.offlineDropped == 3)
        #expect(client.statistics.offlineQueued == 5)
        await client.close(timeout: .milliseconds(100))
        try await task.value
        await broker.remove()
    }

    @Test func theRightPasswordConnectsAndAWrongOneEndsRunWithAuthenticationRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let passwords = try await MosquittoClients.passwordFile(in: directory, user: "gateway", password: "s3cret")
        let broker = try MosquittoBroker(passwordFile: passwords)
        try await broker.start()

        var good = configuration(port: broker.port, spool: directory.file("spool-good"))
        good.username = "gateway"
        good.password = "s3cret"
        let client = try clients.client(good)
        let task = try await started(client)
        await client.close()
        try await task.value

        for version in [MQTTClientConfiguration.ProtocolVersion.v5, .v311] {
            var bad = configuration(port: broker.port, spool: directory.file("spool-bad"))
            bad.protocolVersion = version
            bad.username = "gateway"
            bad.password = "wrong"
            let refused = try MQTTClient(configuration: bad)
            await #expect {
                try await refused.run()
            } throws: { error in
                guard case .authenticationRefused = error as? MQTTError else { return false }
                return true
            }
        }
        await broker.remove()
    }

    @Test("credentials the broker accepted before are retried when refused, and connect once it takes them again")
    func refusedCredentialsAcceptedBeforeAreRetried() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let passwords = try await MosquittoClients.passwordFile(in: directory, user: "gateway", password: "rotated")
        let broker = try MosquittoBroker(passwordFile: passwords)
        try await broker.start()

        var settings = configuration(port: broker.port, spool: directory.file("spool"))
        settings.username = "gateway"
        settings.password = "s3cret"
        settings.credentialsAcceptedBefore = true
        let client = try clients.client(settings)
        let connections = Connections(client)
        let task = Task { try await client.run() }
        // Refused again and again, and still running: an outage, not the end.
        #expect(await clients.until { client.statistics.refusedConnections >= 3 })
        #expect(!client.statistics.connected)

        // The broker takes the password again (its file restored, the broker restarted on the same port).
        await broker.stop()
        let restored = try TemporaryDirectory()
        defer { restored.remove() }
        let original = try await MosquittoClients.passwordFile(in: restored, user: "gateway", password: "s3cret")
        try Data(contentsOf: URL(fileURLWithPath: original)).write(to: URL(fileURLWithPath: passwords))
        try await broker.start()
        #expect(await connections.until(1))
        await client.close()
        try await task.value
        await broker.remove()
    }

    @Test func tlsWithTheRightCAConnectsAndAWrongCAIsRefusedClearly() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let certificates = try await TestCertificates.make(in: directory)
        let broker = try MosquittoBroker(tls: .init(caFile: certificates.caFile, certificateFile: certificates.serverCertificate,
                                                    keyFile: certificates.serverKey, requireClientCertificate: true))
        try await broker.start()

        var good = configuration(port: broker.port, spool: directory.file("spool-good"), host: "localhost")
        good.tls = .init(caFile: certificates.caFile, certificateFile: certificates.clientCertificate,
                         keyFile: certificates.clientKey)
        let client = try clients.client(good)
        let task = try await started(client)
        await client.close()
        try await task.value

        var wrong = good
        wrong.spoolDirectory = directory.file("spool-bad")
        wrong.tls?.caFile = certificates.otherCAFile
        let refused = try MQTTClient(configuration: wrong)
        await #expect {
            try await refused.run()
        } throws: { error in
            guard case .tlsFailure(let message) = error as? MQTTError else { return false }
            return message.contains("certificate verify failed")
        }
        await broker.remove()
    }
}
