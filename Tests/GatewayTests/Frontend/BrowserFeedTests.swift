import MQTT
import Synchronization
import Testing
import Wearables

@testable import Gateway

/// The web interface's side of the gateway without a socket: what each browser is sent, what it may send, and what
/// reaches the gateway.
@Suite("Browser feed: the MQTT contract over the web interface's WebSocket")
struct BrowserFeedTests {
    /// Whether the broker is connected, as the test sets it.
    final class BrokerSwitch: Sendable {
        let connected = Atomic(true)
    }

    let broker = BrokerSwitch()

    func feed(token: String? = nil, queue: (bytes: Int, messages: Int) = (1 << 20, 8192)) -> BrowserFeed {
        BrowserFeed(greeting: .init(baseTopic: "wear2mqtt", gatewayID: "lab", version: "9.9"), token: token.map(Secret.init),
                    brokerConnected: { [broker] in broker.connected.load(ordering: .relaxed) }, queueLimits: queue)
    }

    func json(_ bytes: [UInt8]) throws -> [String: DeviceValue] {
        guard case .object(let fields) = try JSONParser.parse(bytes, limits: JSONLimits(maximumBytes: 1 << 24)) else {
            Issue.record("not an object")
            return [:]
        }
        return fields
    }

    /// The messages of every `messages` frame due, as (topic, payload, retained).
    func messages(_ feed: BrowserFeed, _ id: Int) throws -> [(String, DeviceValue, Bool)] {
        try feed.due(id).flatMap { frame -> [(String, DeviceValue, Bool)] in
            let fields = try json(frame)
            guard case .list(let items)? = fields["messages"] else { return [] }
            return items.compactMap { item in
                guard case .object(let message) = item, case .text(let topic)? = message["topic"],
                      case .flag(let retained)? = message["retained"] else { return nil }
                return (topic, message["payload"] ?? .null, retained)
            }
        }
    }

    func frame(_ text: String) -> [UInt8] { Array(text.utf8) }

    func state(_ topic: String, _ payload: String) -> OutgoingMessage {
        OutgoingMessage(topic: topic, text: payload, qos: .atLeastOnce, retain: true)
    }

    @Test("without a token the first frame is hello, with the broker's state")
    func helloAtOnce() throws {
        let feed = feed()
        let (_, first) = feed.open()
        let hello = try json(first)
        #expect(hello["type"] == .text("hello"))
        #expect(hello["base_topic"] == .text("wear2mqtt"))
        #expect(hello["gateway_id"] == .text("lab"))
        #expect(hello["broker"] == .object(["connected": .flag(true)]))
    }

    @Test("a trusted proxy skips the token; every other address needs it, and without one configured gets no way in")
    func trustedProxy() throws {
        for token in [nil, "s3cret"] as [String?] {
            let feed = BrowserFeed(greeting: .init(baseTopic: "wear2mqtt", gatewayID: "lab", version: "9.9"), token: token.map(Secret.init),
                                   trustedProxies: ["172.30.32.2"], brokerConnected: { true })
            for peer in ["172.30.32.2", "::ffff:172.30.32.2"] {
                #expect(try json(feed.open(peer: peer).first)["type"] == .text("hello"), "\(peer)")
            }
            let (stranger, first) = feed.open(peer: "172.30.32.9")
            #expect(first == BrowserFrames.authRequired)
            let reply = feed.receive(stranger, frame(#"{"type":"auth","token":"s3cret"}"#))
            if token == nil {
                #expect(reply == [.send(BrowserFrames.authFailed), .close(code: 4401, reason: "a valid token is required")])
            } else {
                guard case .send(let hello)? = reply.first else { Issue.record("no hello"); continue }
                #expect(try json(hello)["type"] == .text("hello"))
            }
        }
    }

    @Test("with a token: auth_required first; nothing is taken before the right token; a wrong one closes with 4401")
    func token() throws {
        let feed = feed(token: "s3cret")
        let (id, first) = feed.open()
        #expect(first == BrowserFrames.authRequired)
        feed.offer(state("wear2mqtt/band", #"{"battery":80}"#))
        // A subscription before the token is refused like a wrong token.
        #expect(feed.receive(id, frame(#"{"type":"subscribe","topics":["wear2mqtt/#"]}"#))
                == [.send(BrowserFrames.authFailed), .close(code: 4401, reason: "a valid token is required")])
        let (other, _) = feed.open()
        #expect(feed.receive(other, frame(#"{"type":"auth","token":"s3cret!"}"#)).contains(.close(code: 4401, reason: "a valid token is required")))
        let (good, _) = feed.open()
        let reply = feed.receive(good, frame(#"{"type":"auth","token":"s3cret"}"#))
        guard case .send(let hello)? = reply.first else { Issue.record("no hello"); return }
        #expect(try json(hello)["type"] == .text("hello"))
        _ = feed.receive(good, frame(#"{"type":"subscribe","topics":["wear2mqtt/+"]}"#))
        #expect(try messages(feed, good).map(\.0) == ["wear2mqtt/band"])
    }

    @Test("a subscription gets the retained messages it matches at once, then what it matches as it is published")
    func retainedThenLive() throws {
        let feed = feed()
        feed.offer(state("wear2mqtt/bridge/info", #"{"version":"9.9"}"#))
        feed.offer(state("wear2mqtt/band", #"{"battery":80}"#))
        feed.offer(state("wear2mqtt/band/availability", #"{"state":"online"}"#))
        feed.offer(OutgoingMessage(topic: "wear2mqtt/band/sensor/heart_rate", text: #"{"ts":1,"bpm":60}"#))
        let (id, _) = feed.open()
        _ = feed.receive(id, frame(#"{"type":"subscribe","topics":["wear2mqtt/+","wear2mqtt/+/sensor/#"]}"#))
        let first = try messages(feed, id)
        #expect(first.map(\.0) == ["wear2mqtt/band"])
        #expect(first.first?.1 == .object(["battery": .integer(80)]))
        #expect(first.first?.2 == true)
        feed.offer(OutgoingMessage(topic: "wear2mqtt/band/sensor/heart_rate", text: #"{"ts":2,"bpm":61}"#))
        feed.offer(OutgoingMessage(topic: "wear2mqtt/band/gesture", text: #"{"ts":2,"gesture":"tap"}"#))
        let live = try messages(feed, id)
        #expect(live.map(\.0) == ["wear2mqtt/band/sensor/heart_rate"])
        #expect(live.first?.2 == false)
        // Subscribing again to what it has does not repeat the retained state.
        _ = feed.receive(id, frame(#"{"type":"subscribe","topics":["wear2mqtt/+"]}"#))
        #expect(try messages(feed, id).isEmpty)
        _ = feed.receive(id, frame(#"{"type":"unsubscribe","topics":["wear2mqtt/+/sensor/#"]}"#))
        feed.offer(OutgoingMessage(topic: "wear2mqtt/band/sensor/heart_rate", text: #"{"ts":3,"bpm":62}"#))
        #expect(try messages(feed, id).isEmpty)
    }

    @Test("a cleared retained topic goes out as null and is forgotten; the last health report is kept; other bases are not")
    func clearedAndKept() throws {
        let feed = feed()
        feed.offer(state("wear2mqtt/band", #"{"battery":80}"#))
        feed.offer(OutgoingMessage(topic: "wear2mqtt/band", payload: [], qos: .atLeastOnce, retain: true))
        feed.offer(OutgoingMessage(topic: "wear2mqtt/bridge/health", text: #"{"uptime_s":1}"#))
        feed.offer(OutgoingMessage(topic: "wear2mqtt/bridge/health", text: #"{"uptime_s":61}"#))
        feed.offer(state("homeassistant/sensor/band/battery/config", #"{"name":"Battery"}"#))
        let (id, _) = feed.open()
        _ = feed.receive(id, frame(##"{"type":"subscribe","topics":["#"]}"##))
        let kept = try messages(feed, id)
        #expect(kept.map(\.0) == ["wear2mqtt/bridge/health"])
        #expect(kept.first?.1 == .object(["uptime_s": .integer(61)]))
        feed.offer(OutgoingMessage(topic: "wear2mqtt/band", payload: [], qos: .atLeastOnce, retain: true))
        let cleared = try messages(feed, id)
        #expect(cleared.map(\.0) == ["wear2mqtt/band"])
        #expect(cleared.first?.1 == .null)
    }

    @Test("a publish to a request topic reaches the gateway as that request; anything else is an error frame")
    func publish() async throws {
        let feed = feed()
        let (id, _) = feed.open()
        #expect(feed.receive(id, frame(#"{"type":"publish","topic":"wear2mqtt/band/request/find","payload":{"vibrations":3,"transaction":"w1"}}"#)) == [])
        var requests = feed.requests.makeAsyncIterator()
        let request = try #require(await requests.next())
        #expect(request.topic == "wear2mqtt/band/request/find")
        #expect(try JSONParser.parse(request.payload) == .object(["vibrations": .integer(3), "transaction": .text("w1")]))
        #expect(request.retain == false)
        for topic in ["wear2mqtt/band", "wear2mqtt/band/availability", "other/bridge/request/scan", "wear2mqtt/bridge/state"] {
            let reply = feed.receive(id, frame("{\"type\":\"publish\",\"topic\":\"\(topic)\",\"payload\":{}}"))
            guard case .send(let error)? = reply.first else { Issue.record("no error for \(topic)"); continue }
            #expect(try json(error)["type"] == .text("error"))
        }
    }

    @Test("frames that cannot be taken get an error frame in words, and change nothing", arguments: [
        "{\"type\":\"subscribe\"", "[1]", "{}", "{\"type\":5}", "{\"type\":\"shout\"}", "{\"type\":\"subscribe\",\"topics\":\"#\"}",
        "{\"type\":\"subscribe\",\"topics\":[\"a/#/b\"]}", "{\"type\":\"subscribe\",\"topics\":[7]}", "{\"type\":\"publish\"}",
        "{\"type\":\"publish\",\"topic\":[]}", "{\"type\":\"auth\",\"token\":1}", "{\"type\":\"subscribe\",\"type\":\"publish\"}",
    ])
    func badFrames(text: String) throws {
        let feed = feed()
        let (id, _) = feed.open()
        let reply = feed.receive(id, frame(text))
        #expect(reply.count == 1)
        guard case .send(let error)? = reply.first else { Issue.record("no error"); return }
        let fields = try json(error)
        #expect(fields["type"] == .text("error"))
        guard case .text(let message)? = fields["message"] else { Issue.record("no message"); return }
        #expect(!message.isEmpty)
    }

    @Test("random bytes never crash the feed and are answered with at most one frame")
    func randomFrames() {
        let feed = feed()
        let (id, _) = feed.open()
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(feed.receive(id, bytes).count <= 1)
        }
    }

    @Test("a flood of requests beyond the backlog is refused in words, not queued without end")
    func requestFlood() {
        let feed = feed()
        let (id, _) = feed.open()
        var refused = 0
        for index in 0..<(BrowserFeed.requestBacklog + 10) {
            let text = #"{"type":"publish","topic":"wear2mqtt/bridge/request/health_check","payload":{"transaction":"# + "\(index)}}"
            refused += feed.receive(id, frame(text)).count
        }
        #expect(refused == 10)
    }

    @Test("a browser that does not read loses its samples, counted in status and statistics; its state is kept")
    func slowBrowser() throws {
        let feed = feed(queue: (bytes: 1 << 20, messages: 10))
        let (id, _) = feed.open()
        _ = feed.receive(id, frame(#"{"type":"subscribe","topics":["wear2mqtt/#"]}"#))
        for index in 0..<100 { feed.offer(OutgoingMessage(topic: "wear2mqtt/h10/sensor/ecg", text: #"{"ts":\#(index),"uv":1}"#)) }
        feed.offer(state("wear2mqtt/h10", #"{"battery":50}"#))
        let frames = feed.due(id)
        let status = try json(frames[0])
        #expect(status["type"] == .text("status"))
        #expect(status["dropped"] == .integer(90))
        #expect(try json(frames[1])["messages"].map { value -> Int in if case .list(let items) = value { items.count } else { 0 } } == 11)
        #expect(feed.statistics.browsers == 1)
        #expect(feed.statistics.dropped == 90)
        feed.close(id)
        #expect(feed.statistics.browsers == 0)
        #expect(feed.statistics.dropped == 90)
    }

    @Test("the broker going away and coming back is a status frame each time, and the feed keeps working meanwhile")
    func brokerStatus() throws {
        let feed = feed()
        let (id, _) = feed.open()
        _ = feed.receive(id, frame(#"{"type":"subscribe","topics":["wear2mqtt/+"]}"#))
        #expect(feed.due(id).isEmpty)
        broker.connected.store(false, ordering: .relaxed)
        feed.offer(state("wear2mqtt/band", #"{"battery":79}"#))
        let away = feed.due(id)
        #expect(try json(away[0]) == ["type": .text("status"), "broker": .object(["connected": .flag(false)]), "dropped": .integer(0)])
        #expect(try json(away[1])["type"] == .text("messages"))
        #expect(feed.due(id).isEmpty)
        broker.connected.store(true, ordering: .relaxed)
        #expect(try json(try #require(feed.due(id).first))["broker"] == .object(["connected": .flag(true)]))
    }

    @Test("with no browser open, samples cost nothing: nothing is kept but retained messages")
    func idle() throws {
        let feed = feed()
        for index in 0..<1000 { feed.offer(OutgoingMessage(topic: "wear2mqtt/h10/sensor/ecg", text: #"{"ts":\#(index),"uv":1}"#)) }
        let (id, _) = feed.open()
        _ = feed.receive(id, frame(##"{"type":"subscribe","topics":["#"]}"##))
        #expect(try messages(feed, id).isEmpty)
    }

    @Test("payloads are carried byte for byte; a non-JSON payload becomes a string")
    func payloads() throws {
        let message = OutgoingMessage(topic: "wear2mqtt/x", text: #"{"b":1.5e+20,"a":[1,2]}"#)
        #expect(BrowserFrames.entry(message).encoded == Array(#"{"topic":"wear2mqtt/x","payload":{"b":1.5e+20,"a":[1,2]},"retained":false}"#.utf8))
        let text = OutgoingMessage(topic: "wear2mqtt/x", text: "online", retain: true)
        #expect(BrowserFrames.entry(text).encoded == Array(#"{"topic":"wear2mqtt/x","payload":"online","retained":true}"#.utf8))
    }

    @Test("tokens are compared whole: prefixes, extensions and other lengths are refused")
    func tokenCheck() {
        let check = TokenCheck(Secret("correct horse"))
        #expect(check.accepts("correct horse"))
        for wrong in ["", "correct", "correct horse ", "Correct horse", "correct horsf", String(repeating: "x", count: 4096)] {
            #expect(!check.accepts(wrong))
        }
    }
}
