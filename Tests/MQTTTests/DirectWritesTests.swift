import EventLoop
import Glibc
import MQTT
import Synchronization
import Testing
import Wear2MQTTTesting

/// QoS 0 samples the client writes past libmosquitto (`PublishPacket`), against a real mosquitto: they and the
/// messages libmosquitto sends leave in the order they were published (as far as libmosquitto itself keeps it), a
/// backlog the socket cannot take at once arrives whole, and the broker's Maximum Packet Size holds for them too.
@Suite
struct DirectWritesTests {
    @Test(arguments: [MQTTClientConfiguration.ProtocolVersion.v5, .v311])
    func samplesAndLibraryMessagesArriveInTheOrderPublished(version: MQTTClientConfiguration.ProtocolVersion) async throws {
        try await withSubscribedClient(to: "test/order", version: version) { client, clients, _, messages in
            // Fewer QoS 1 messages than libmosquitto keeps in flight (20), so it holds none back and the order is total.
            let count = 45
            // One task, so one iteration: QoS 0 samples (direct), QoS 1 and retained messages (libmosquitto) mixed.
            clients.loop.execute {
                for index in 0..<count { client.publish(Self.message(index)) }
            }
            var received: [IncomingMessage] = []
            while received.count < count, let message = await messages.next() {
                if message.topic == "test/order" { received.append(message) }
            }
            #expect(received.map(\.text) == (0..<count).map { "\($0)" })
            let types = Set(received.filter { $0.qos == .atMostOnce }.map(\.properties.contentType))
            #expect(types == [version == .v5 ? "application/json" : nil])
        }
    }

    @Test func aBacklogTheSocketCannotTakeArrivesWholeAndInOrder() async throws {
        try await withSubscribedClient(to: "test/order") { client, clients, broker, messages in
            let pid = try #require(broker.pid)
            // The broker reads nothing while stopped, so the iteration's 55 MB cannot all be sent at its end (loopback
            // TCP buffers up to 36 MB here: tcp_rmem's and tcp_wmem's maximum): the first 96 samples go directly
            // and stop part-way; the QoS 1 message after them, and the samples after it, wait in libmosquitto until
            // the rest of the direct ones is out.
            kill(pid, SIGSTOP)
            defer { kill(pid, SIGCONT) }
            let count = 110
            let payload = [UInt8](repeating: 0x78, count: 512 * 1024)
            clients.loop.execute {
                for index in 0..<count {
                    client.publish(OutgoingMessage(topic: "test/order", payload: Array("\(index) ".utf8) + payload,
                                                   qos: index == 96 ? .atLeastOnce : .atMostOnce,
                                                   properties: MQTTProperties(contentType: "application/json")))
                }
            }
            await clients.barrier()
            let waiting = client.statistics
            kill(pid, SIGCONT)
            var received: [String] = []
            while received.count < count, let message = await messages.next() {
                if message.topic == "test/order" { received.append(String(message.text.prefix { $0 != " " })) }
            }
            #expect(received == (0..<count).map { "\($0)" })
            #expect(waiting.connected)
            #expect(client.statistics.connections == 1)
        }
    }

    @Test func aSampleOverTheBrokersMaximumPacketSizeIsRefusedAndTheLinkStays() async throws {
        try await withSubscribedClient(to: "test/order", brokerLines: ["max_packet_size 2000"]) { client, clients, _, messages in
            clients.loop.execute {
                client.publish(OutgoingMessage(topic: "test/order", payload: [UInt8](repeating: 0x61, count: 3000)))
                client.publish(OutgoingMessage(topic: "test/order", text: "after"))
            }
            while let message = await messages.next() {
                if message.topic == "test/order" {
                    #expect(message.text == "after", "the oversized sample reached the subscriber")
                    break
                }
            }
            #expect(client.statistics.connections == 1, "the broker dropped the link")
        }
    }

    /// libmosquitto sees none of the samples, so while they flow it sends a PINGREQ every keepalive (5 s, its
    /// shortest) and must hear the PINGRESP: three keepalive periods of samples every 50 ms keep one connection.
    @Test func samplesSentDirectlyForThreeKeepalivePeriodsKeepTheLink() async throws {
        try await withSubscribedClient(to: "test/order", keepAliveSeconds: 5) { client, clients, _, messages in
            let loop = clients.loop
            let end = ContinuousClock.now + .seconds(16)
            let published = Mutex(0)
            // A sample every 50 ms from the client's own loop, the last one marked.
            @Sendable func publishNext() {
                let index = published.withLock { count in defer { count += 1 }; return count }
                let last = ContinuousClock.now >= end
                client.publish(OutgoingMessage(topic: "test/order", text: last ? "last \(index)" : "\(index)"))
                if !last { _ = loop.schedule(at: .now + .milliseconds(50)) { publishNext() } }
            }
            loop.execute { publishNext() }
            var received = 0
            while let message = await messages.next() {
                guard message.topic == "test/order" else { continue }
                received += 1
                if message.text.hasPrefix("last") { break }
            }
            #expect(received == published.withLock { $0 })
            #expect(received > 250)
            #expect(client.statistics.connections == 1, "the link was lost while samples flowed")
        }
    }

    /// Every third message QoS 1, every seventh retained; the rest samples with a content type.
    private static func message(_ index: Int) -> OutgoingMessage {
        OutgoingMessage(topic: "test/order", text: "\(index)", qos: index % 3 == 0 ? .atLeastOnce : .atMostOnce,
                        retain: index % 7 == 0, properties: MQTTProperties(contentType: "application/json"))
    }
}
