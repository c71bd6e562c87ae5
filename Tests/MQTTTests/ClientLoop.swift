import EventLoop
import MQTT
import Synchronization
import Testing
import Wear2MQTTTesting

/// The event loop a test's MQTT clients run on, as the daemon's client runs on its data path. What the client knows
/// (`statistics`) changes on this loop, so `until` re-checks a condition after every iteration of it (the one that
/// handled the broker going, a CONNACK, a PUBACK), and `barrier` returns once everything submitted to the loop
/// before it has run (the step that took in a publish has counted it).
final class ClientLoop: Sendable {
    let loop: EventLoop
    private let changes = ChangeNotifier()

    init(name: String = "test-mqtt") throws {
        loop = try EventLoop.started(name: name)
        let loop = loop
        let changes = changes
        loop.execute { _ = loop.whenIterationEnds { changes.changed() } }
    }

    /// A client on this loop.
    func client(_ configuration: MQTTClientConfiguration) throws -> MQTTClient {
        try MQTTClient(configuration: configuration, loop: loop)
    }

    /// True as soon as `condition` holds, re-checked after every iteration of the loop; false after `timeout`, a
    /// failure guard in real time.
    func until(timeout: Duration = .seconds(20), _ condition: () -> Bool) async -> Bool {
        await changes.until(timeout: timeout, condition)
    }

    /// Returns once what was submitted to the loop before this call has run.
    func barrier() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in loop.execute { done.resume() } }
    }

    /// The loop ends with the test that made it (its clients closed by then).
    deinit { loop.stop() }
}

/// A client's connections, counted by its `onConnect` hook.
final class Connections: Sendable {
    private let count = Mutex(0)
    private let changes = ChangeNotifier()

    /// Registers the hook: before `run`, to count the first connection too.
    init(_ client: MQTTClient) {
        client.onConnect { [self] in
            count.withLock { $0 += 1 }
            changes.changed()
        }
    }

    var made: Int { count.withLock { $0 } }

    /// True once `count` connections were made, woken by each; false after `timeout`.
    func until(_ count: Int, timeout: Duration = .seconds(20)) async -> Bool {
        await changes.until(timeout: timeout) { made >= count }
    }
}

extension MQTTClient {
    /// Publishes a probe to `topic` and reads messages until it comes back: the broker has the client's
    /// subscriptions covering `topic` (sent before the probe on the same connection). Answers the iterator, after it.
    func subscribed(probing topic: String) async throws -> IncomingMessages.AsyncIterator {
        publish(OutgoingMessage(topic: topic, text: "probe", qos: .atLeastOnce))
        var iterator = messages.makeAsyncIterator()
        while let message = await iterator.next() {
            if message.topic == topic && message.text == "probe" { return iterator }
        }
        throw TestSetupError("the messages ended before the probe on \(topic) came back")
    }
}

/// A client on a loop of its own and a broker of its own, subscribed to `topic`; `body` gets the messages once the
/// subscription is in place (a probe came back). A hang guard closes the client, so a lost message fails an
/// expectation instead of hanging the test. Client and broker end after `body`.
func withSubscribedClient(
    to topic: String, qos: QoS = .atLeastOnce, version: MQTTClientConfiguration.ProtocolVersion = .v5,
    keepAliveSeconds: Int = 60, brokerLines: [String] = [],
    _ body: (MQTTClient, ClientLoop, MosquittoBroker, inout IncomingMessages.AsyncIterator) async throws -> Void
) async throws {
    let broker = try MosquittoBroker(extraLines: brokerLines)
    try await broker.start()
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let clients = try ClientLoop()
    let client = try clients.client(MQTTClientConfiguration(host: "127.0.0.1", port: broker.port, clientID: "subscribed-test",
                                                            protocolVersion: version, keepAliveSeconds: keepAliveSeconds,
                                                            spoolDirectory: directory.file("spool")))
    try client.subscribe(topic, qos: qos)
    let connections = Connections(client)
    let run = Task { try await client.run() }
    defer { run.cancel() }
    try #require(await connections.until(1), "the client did not connect")
    let hang = HangGuard(after: .seconds(60)) { [client] in await client.close(timeout: .milliseconds(100)) }
    defer { hang.cancel() }
    var messages = try await client.subscribed(probing: topic)
    try await body(client, clients, broker, &messages)
    await client.close()
    try await run.value
    await broker.remove()
}
