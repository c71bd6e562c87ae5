import Foundation
import MQTT
import Testing
import Wear2MQTTTesting

/// Issue 43, item 2: the writes batched per loop iteration were once reverted because "a broker lost at the moment of
/// a graceful shutdown left the close unfinished and the gateway retrying for ever" (2026-11-26). This is that moment,
/// over and over: a client streaming samples with durable records in flight is closed (with final messages) while its
/// broker is killed or stopped — before, together with and just after the close. Every close must end, and the run
/// with it (a close still waiting after 30 s is reported as hung).
@Suite struct CloseWhileTheBrokerGoesTests {
    enum Ending: CaseIterable, Sendable { case killedFirst, killedTogether, killedAfter, stoppedTogether }

    @Test(arguments: Ending.allCases)
    func aCloseEndsWhenItsBrokerGoesAtTheSameMoment(_ ending: Ending) async throws {
        let clients = try ClientLoop()
        for round in 0..<6 {
            let broker = try MosquittoBroker()
            try await broker.start()
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let client = try clients.client(MQTTClientConfiguration(
                host: "127.0.0.1", port: broker.port, clientID: "close-\(round)", keepAliveSeconds: 10,
                reconnect: ReconnectBackoff(minimumDelay: .milliseconds(50), maximumDelay: .milliseconds(200)),
                spoolDirectory: directory.file("spool")))
            let connections = Connections(client)
            let run = Task { try await client.run() }
            try #require(await connections.until(1), "round \(round): the client did not connect")

            // Samples on the loop (a notification decoded there publishes the same way), and durable records waiting
            // for their PUBACK.
            let stream = Task {
                var index = 0
                while !Task.isCancelled {
                    for _ in 0..<20 { client.publish(OutgoingMessage(topic: "test/sample", text: "\(index)")); index += 1 }
                    await Task.yield()
                }
            }
            let records = Task {
                for index in 0..<50 { try? await client.publishDurable(OutgoingMessage(topic: "test/record", text: "\(index)", qos: .atLeastOnce)) }
            }
            try await Task.sleep(for: .milliseconds(30))  // the stream under way; any moment will do

            let started = ContinuousClock.now
            let guardHang = HangGuard(after: .seconds(30)) { Issue.record("round \(round), \(ending): the close never ended") }
            let final = [OutgoingMessage(topic: "test/state", text: "offline", qos: .atLeastOnce, retain: true)]
            switch ending {
            case .killedFirst:
                await broker.kill()
                await client.close(finalMessages: final, timeout: .seconds(2))
            case .killedTogether:
                async let killed: Void = broker.kill()
                await client.close(finalMessages: final, timeout: .seconds(2))
                await killed
            case .killedAfter:
                client.requestClose(finalMessages: final, timeout: .seconds(2)) {}
                await broker.kill()
                await client.close(timeout: .seconds(2))
            case .stoppedTogether:
                async let stopped: Void = broker.stop()
                await client.close(finalMessages: final, timeout: .seconds(2))
                await stopped
            }
            _ = try? await run.value
            guardHang.cancel()
            let took = ContinuousClock.now - started
            stream.cancel()
            records.cancel()
            _ = await records.value
            // Ending is what counts (the bug was "for ever", which the hang guard reports); how long it took under
            // load is the machine's business, so it is only shown.
            if took > .seconds(5) { print("figure: round \(round), \(ending): the close took \(took) (a loaded machine)") }
            await broker.remove()
        }
    }
}
