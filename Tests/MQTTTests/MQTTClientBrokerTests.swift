import Foundation
import MQTT
import Synchronization
import Testing
import Wear2MQTTTesting

/// The MQTT client against a real mosquitto on a loopback port; mosquitto_sub and mosquitto_pub are the
/// independent witnesses.
@Suite(.timeLimit(.minutes(3)))
struct MQTTClientBrokerTests {
    func configuration(port: Int, spool: String, clientID: String = "test-\(UUID().uuidString.prefix(8))",
                       host: String = "127.0.0.1") -> MQTTClientConfiguration {
        MQTTClientConfiguration(
            host: host, port: port, clientID: clientID, keepAliveSeconds: 10,
            reconnect: ReconnectBackoff(minimumDelay: .milliseconds(100), maximumDelay: .milliseconds(500)),
            spoolDirectory: spool)
    }

    /// Runs the client in a task and waits for its first connection.
    func started(_ client: MQTTClient) async throws -> Task<Void, Error> {
        let task = Task { try await client.run() }
        let connected = await eventually { client.statistics.connected }
        try #require(connected, "the client did not connect")
        return task
    }

    @Test func aRequestWithResponseTopicAndCorrelationDataArrivesWithBoth() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let client = try MQTTClient(configuration: configuration(port: broker.port, spool: directory.file("spool")))
        try client.subscribe("test/request/#")
        let task = try await started(client)
        try await Task.sleep(for: .milliseconds(200))

        try await MosquittoClients.publish(port: broker.port, topic: "test/request/find", message: #"{"level":"high"}"#,
                                           extraArguments: ["-V", "5", "-D", "publish", "response-topic", "test/reply",
                                                            "-D", "publish", "correlation-data", "abc123"])
        var iterator = client.messages.makeAsyncIterator()
        let message = try #require(await iterator.next())
        #expect(message.topic == "test/request/find")
        #expect(message.text == #"{"level":"high"}"#)
        #expect(message.properties.responseTopic == "test/reply")
        #expect(message.properties.correlationData == Array("abc123".utf8))

        async let reply = MosquittoClients.receive(port: broker.port, topic: "test/reply", timeoutSeconds: 5,
                                                   extraArguments: ["-V", "5", "-F", "%t %p %C"])
        try await Task.sleep(for: .milliseconds(300))
        client.publish(OutgoingMessage(topic: "test/reply", text: #"{"status":"ok"}"#, qos: .atLeastOnce,
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
        let client = try MQTTClient(configuration: configuration(port: broker.port, spool: directory.file("spool")))
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

    @Test func afterABrokerRestartItReconnectsWithinTheBackoffMaximumAndSubscriptionsWorkAgain() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let client = try MQTTClient(configuration: configuration(port: broker.port, spool: directory.file("spool")))
        let connects = Mutex(0)
        client.onConnect { connects.withLock { $0 += 1 } }
        try client.subscribe("test/in")
        let task = try await started(client)

        await broker.kill()
        #expect(await eventually { !client.statistics.connected })
        try await broker.start()
        let restartedAt = ContinuousClock.now
        #expect(await eventually(timeout: .seconds(5)) { client.statistics.connected })
        // Backoff maximum is 0.5 s; the rest is slack for a loaded 2-core machine.
        #expect(ContinuousClock.now - restartedAt < .seconds(3))
        #expect(await eventually { connects.withLock { $0 } == 2 })

        try await Task.sleep(for: .milliseconds(200))
        try await MosquittoClients.publish(port: broker.port, topic: "test/in", message: "after restart", extraArguments: ["-q", "1"])
        var iterator = client.messages.makeAsyncIterator()
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
        try #require(await eventually {
            try await MosquittoClients.publish(port: broker.port, topic: "test/durable/probe", message: "probe", extraArguments: ["-q", "1"])
            return subscriber.output.contains("probe")
        })

        let spool = directory.file("spool")
        let first = try MQTTClient(configuration: configuration(port: broker.port, spool: spool, clientID: "gw-durable"))
        let firstTask = try await started(first)
        await broker.stop()
        #expect(await eventually { !first.statistics.connected })
        for index in 0..<500 {
            try await first.publishDurable(OutgoingMessage(topic: "test/durable/record", text: "\(index)", qos: .atLeastOnce))
        }
        await first.close(timeout: .seconds(1))
        try await firstTask.value

        // The gateway restarts while the broker is still away.
        let second = try MQTTClient(configuration: configuration(port: broker.port, spool: spool, clientID: "gw-durable"))
        let secondTask = Task { try await second.run() }
        for index in 500..<1000 {
            try await second.publishDurable(OutgoingMessage(topic: "test/durable/record", text: "\(index)", qos: .atLeastOnce))
        }
        #expect(await eventually { second.statistics.spoolPending == 1000 })
        try await broker.start()

        let delivered = await eventually(timeout: .seconds(30)) {
            subscriber.output.split(separator: "\n").filter { $0.hasPrefix("test/durable/record ") }.count >= 1000
        }
        try await Task.sleep(for: .milliseconds(500)) // a duplicate would arrive now
        let records = subscriber.output.split(separator: "\n").filter { $0.hasPrefix("test/durable/record ") }
            .map { String($0.dropFirst("test/durable/record ".count)) }
        #expect(delivered)
        #expect(records == (0..<1000).map(String.init))
        #expect(await eventually { second.statistics.spoolPending == 0 })

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
        let client = try MQTTClient(configuration: settings)
        let task = try await started(client)
        await broker.kill()
        #expect(await eventually { !client.statistics.connected })
        for index in 0..<8 { client.publish(OutgoingMessage(topic: "test/sample", text: "\(index)")) }
        #expect(await eventually { client.statistics.offlineDropped == 3 })
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
        let client = try MQTTClient(configuration: good)
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
        let client = try MQTTClient(configuration: settings)
        let task = Task { try await client.run() }
        // Refused again and again, and still running: an outage, not the end.
        #expect(await eventually { client.statistics.refusedConnections >= 3 })
        #expect(!client.statistics.connected)

        // The broker takes the password again (its file restored, the broker restarted on the same port).
        await broker.stop()
        let restored = try TemporaryDirectory()
        defer { restored.remove() }
        let original = try await MosquittoClients.passwordFile(in: restored, user: "gateway", password: "s3cret")
        try Data(contentsOf: URL(fileURLWithPath: original)).write(to: URL(fileURLWithPath: passwords))
        try await broker.start()
        #expect(await eventually { client.statistics.connected })
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
        let client = try MQTTClient(configuration: good)
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
