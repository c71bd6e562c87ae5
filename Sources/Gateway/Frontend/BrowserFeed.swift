import MQTT
import Synchronization
import Wearables

/// The web interface's side of the gateway: every message the gateway publishes reaches the browsers subscribed to
/// it, and what a browser publishes goes to the gateway as a request, so the page speaks the MQTT contract with no
/// second API (docs/frontend.md). It works without the broker: the WebSocket never goes through it.
///
/// `offer` is on the data path: with no browser open it only keeps retained messages. The transport (the HTTP
/// server) calls `open`, `receive` and `due` for each socket; their answers say what to send.
public final class BrowserFeed: Sendable {
    public struct Greeting: Sendable {
        public var baseTopic: String
        public var gatewayID: String
        public var version: String

        public init(baseTopic: String, gatewayID: String, version: String) {
            self.baseTopic = baseTopic
            self.gatewayID = gatewayID
            self.version = version
        }
    }

    /// What a browser's frame asks of the transport and the gateway.
    public enum Action: Sendable, Equatable {
        case send([UInt8])
        /// Close the socket with this WebSocket code (4401: the token was wrong or missing).
        case close(code: UInt16, reason: String)
    }

    private let state: Mutex<BrowserFeedState>
    private let greeting: Greeting
    private let token: TokenCheck?
    /// Reverse proxies that sign people in themselves (Home Assistant's ingress): their sockets skip the token. With
    /// any set, every other address needs the token — and with no token configured, gets no way in.
    private let trustedProxies: Set<String>
    private let topics: TopicLayout
    private let healthTopic: String
    /// `<base>/`: Home Assistant's discovery records are not the contract's, and not kept.
    private let basePrefix: String
    private let brokerConnected: @Sendable () -> Bool
    /// Browsers open, read on the data path without the lock.
    private let openBrowsers = Atomic<Int>(0)
    /// Requests on their way to the gateway (`GatewayService` serves them as it serves MQTT's).
    public let requests: AsyncStream<IncomingMessage>
    private let requestInbox: AsyncStream<IncomingMessage>.Continuation

    /// Requests waiting for the gateway beyond which a browser is told to slow down instead.
    public static let requestBacklog = 256
    /// One `messages` frame carries at most this much; more waits for the next tick.
    public static let frameBytes = 256 * 1024

    /// When a wrong token was presented, for `AuthThrottle`.
    private let now: @Sendable () -> ContinuousClock.Instant

    public init(greeting: Greeting, token: Secret?, trustedProxies: [String] = [], brokerConnected: @escaping @Sendable () -> Bool,
                queueLimits: (bytes: Int, messages: Int) = (1 << 20, 8192),
                now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.greeting = greeting
        self.now = now
        self.token = token.map(TokenCheck.init)
        self.trustedProxies = Set(trustedProxies.map(Self.plainAddress))
        self.topics = TopicLayout(base: greeting.baseTopic)
        self.healthTopic = topics.bridgeHealth
        basePrefix = greeting.baseTopic + "/"
        self.brokerConnected = brokerConnected
        state = Mutex(BrowserFeedState(queueLimits: queueLimits))
        (requests, requestInbox) = AsyncStream.makeStream(bufferingPolicy: .bufferingOldest(Self.requestBacklog))
    }

    /// A message the gateway published (the sink's tee calls this for every one).
    public func offer(_ message: OutgoingMessage) {
        guard message.topic.hasPrefix(basePrefix) else { return }
        let keep = message.topic == healthTopic
        guard message.retain || keep || openBrowsers.load(ordering: .relaxed) > 0 else { return }
        let entry = BrowserFrames.entry(message)
        state.withLock { $0.offer(entry, cleared: message.retain && message.payload.isEmpty, keep: keep) }
    }

    /// A socket opened from `peer` (its remote address): its id and the first frame (`auth_required`, or `hello`
    /// when no token is needed: none configured and no trusted proxy, or the peer is a trusted proxy).
    public func open(peer: String = "") -> (id: Int, first: [UInt8]) {
        let needsToken = trustedProxies.isEmpty ? token != nil : !trustedProxies.contains(Self.plainAddress(peer))
        let id = state.withLock { $0.open(needsToken: needsToken, peer: peer) }
        guard needsToken else { return (id, hello(id)) }
        return (id, BrowserFrames.authRequired)
    }

    /// Whether the gateway has its broker now (for `/health`).
    public var isBrokerConnected: Bool { brokerConnected() }

    /// An IPv4 peer of a dual-stack socket arrives as `::ffff:a.b.c.d`; proxies are named as `a.b.c.d`.
    static func plainAddress(_ address: String) -> String {
        let lowered = address.lowercased()
        return lowered.hasPrefix("::ffff:") && lowered.contains(".") ? String(lowered.dropFirst(7)) : lowered
    }

    public func close(_ id: Int) {
        let wasOpen = state.withLock { state in
            defer { state.close(id) }
            return state.phase(of: id) == .open
        }
        if wasOpen { openBrowsers.subtract(1, ordering: .relaxed) }
    }

    /// One text frame from a browser.
    public func receive(_ id: Int, _ bytes: [UInt8]) -> [Action] {
        guard let phase = state.withLock({ $0.phase(of: id) }) else { return [] }
        let frame: BrowserFrame
        switch BrowserFrame.parse(bytes) {
        case .success(let parsed): frame = parsed
        case .failure(let error): return [.send(BrowserFrames.error(error.message))]
        }
        if phase == .awaitingToken {
            return authenticate(id, frame)
        }
        switch frame {
        case .auth:
            return []
        case .subscribe(let filters):
            state.withLock { $0.subscribe(id, to: filters) }
            return []
        case .unsubscribe(let filters):
            state.withLock { $0.unsubscribe(id, from: filters) }
            return []
        case .publish(let topic, let payload):
            if case .notOurs = topics.classify(topic) {
                return [.send(BrowserFrames.error("\(RequestReader.quote(topic)) is not a request topic of this gateway "
                                                  + "(\(greeting.baseTopic)/bridge/request/…, \(greeting.baseTopic)/<id>/request/…, /set, /get)"))]
            }
            let message = IncomingMessage(topic: topic, payload: payload, qos: .atLeastOnce, retain: false, properties: MQTTProperties())
            if case .dropped = requestInbox.yield(message) {
                return [.send(BrowserFrames.error("the gateway has \(Self.requestBacklog) requests waiting; this one was not taken, try again"))]
            }
            return []
        }
    }

    /// What is due to a browser now (the transport asks every 50 ms while the socket can take more).
    public func due(_ id: Int) -> [[UInt8]] {
        let connected = brokerConnected()
        return state.withLock { $0.due(id, brokerConnected: connected, maximumBytes: Self.frameBytes) }
    }

    /// Browsers open now and the messages dropped for them (for `bridge/health` and metrics).
    public var statistics: (browsers: Int, dropped: Int) {
        state.withLock { ($0.openCount, $0.totalDropped) }
    }

    public func finish() { requestInbox.finish() }

    /// The first frame of a socket waiting for the token: the token, unless this address tried too many wrong ones
    /// lately (`AuthThrottle`), in which case it is not looked at.
    private func authenticate(_ id: Int, _ frame: BrowserFrame) -> [Action] {
        let refused = Action.close(code: 4401, reason: "a valid token is required")
        let at = now()
        let (peer, wait) = state.withLock { state in
            let peer = state.peer(of: id) ?? ""
            return (peer, state.throttle.wait(for: peer, at: at))
        }
        if let wait {
            let seconds = Int(wait.components.seconds) + (wait.components.attoseconds > 0 ? 1 : 0)
            return [.send(BrowserFrames.authThrottled(retryAfterSeconds: seconds)), refused]
        }
        guard case .auth(let presented) = frame, let token, token.accepts(presented) else {
            state.withLock { $0.throttle.failed(peer, at: at) }
            return [.send(BrowserFrames.authFailed), refused]
        }
        state.withLock { $0.throttle.succeeded(peer) }
        return [.send(hello(id))]
    }

    private func hello(_ id: Int) -> [UInt8] {
        let connected = brokerConnected()
        state.withLock {
            $0.authenticated(id)
            $0.greeted(id, brokerConnected: connected)
        }
        openBrowsers.add(1, ordering: .relaxed)
        return BrowserFrames.hello(baseTopic: greeting.baseTopic, gatewayID: greeting.gatewayID, version: greeting.version,
                                   brokerConnected: connected)
    }
}
