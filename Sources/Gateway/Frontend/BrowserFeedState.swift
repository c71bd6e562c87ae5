import OrderedCollections

/// The web interface's browsers and what each is owed, as a pure value (`BrowserFeed` holds it under its lock): the
/// retained messages a new subscription is handed, each browser's filters and queue, and its protocol state.
/// Nothing here does I/O or takes a lock.
struct BrowserFeedState: Sendable {
    enum Phase: Sendable, Equatable {
        /// Waiting for `{"type":"auth"}` (a token is configured).
        case awaitingToken
        case open
    }

    struct Browser: Sendable {
        var phase: Phase
        /// The socket's remote address, for `AuthThrottle`.
        var peer: String
        var filters: Set<TopicFilter> = []
        var queue: BrowserQueue
        /// What the last `status` frame said, so a change is sent once.
        var reportedBroker: Bool?
        var reportedDropped = 0
    }

    let queueLimits: (bytes: Int, messages: Int)
    /// Retained topics in their publishing order, plus the last `bridge/health` (published every minute otherwise).
    private(set) var retained: OrderedDictionary<String, BrowserQueue.Entry> = [:]
    private(set) var browsers: [Int: Browser] = [:]
    private var nextID = 0
    /// Drops counted for browsers since closed.
    private var droppedByClosed = 0

    init(queueLimits: (bytes: Int, messages: Int) = (1 << 20, 8192)) {
        self.queueLimits = queueLimits
    }

    /// Wrong tokens per address.
    var throttle = AuthThrottle()

    /// A new socket from `peer`; `needsToken` decides whether it starts waiting for the token.
    mutating func open(needsToken: Bool, peer: String = "") -> Int {
        nextID += 1
        browsers[nextID] = Browser(phase: needsToken ? .awaitingToken : .open, peer: peer,
                                   queue: BrowserQueue(maximumBytes: queueLimits.bytes, maximumMessages: queueLimits.messages))
        return nextID
    }

    mutating func close(_ id: Int) {
        droppedByClosed += browsers[id]?.queue.dropped ?? 0
        browsers[id] = nil
    }

    func phase(of id: Int) -> Phase? { browsers[id]?.phase }

    func peer(of id: Int) -> String? { browsers[id]?.peer }

    mutating func authenticated(_ id: Int) { browsers[id]?.phase = .open }

    /// A message the gateway published: kept when it is retained (or the health report), queued for every open
    /// browser subscribed to it. `keep` marks a non-retained topic whose last message a new subscriber gets.
    mutating func offer(_ entry: BrowserQueue.Entry, cleared: Bool, keep: Bool) {
        if entry.retained || keep {
            if cleared { retained[entry.topic] = nil } else { retained[entry.topic] = entry }
        }
        for id in browsers.keys where browsers[id]!.phase == .open && browsers[id]!.filters.contains(where: { $0.matches(entry.topic) }) {
            browsers[id]!.queue.enqueue(entry)
        }
    }

    /// Adds filters and queues every kept message they match that the browser's earlier filters did not.
    mutating func subscribe(_ id: Int, to filters: [TopicFilter]) {
        guard var browser = browsers[id] else { return }
        let new = filters.filter { !browser.filters.contains($0) }
        for entry in retained.values where new.contains(where: { $0.matches(entry.topic) })
            && !browser.filters.contains(where: { $0.matches(entry.topic) }) {
            browser.queue.enqueue(entry)
        }
        browser.filters.formUnion(new)
        browsers[id] = browser
    }

    mutating func unsubscribe(_ id: Int, from filters: [TopicFilter]) {
        browsers[id]?.filters.subtract(filters)
    }

    /// The frames due to a browser: a `status` frame when the broker link or the browser's drops changed since it
    /// was last told, then a `messages` frame of what waits (at most `maximumBytes`, at least one message).
    mutating func due(_ id: Int, brokerConnected: Bool, maximumBytes: Int) -> [[UInt8]] {
        guard var browser = browsers[id], browser.phase == .open else { return [] }
        var frames: [[UInt8]] = []
        if browser.reportedBroker != brokerConnected || browser.reportedDropped != browser.queue.dropped {
            browser.reportedBroker = brokerConnected
            browser.reportedDropped = browser.queue.dropped
            frames.append(BrowserFrames.status(brokerConnected: brokerConnected, dropped: browser.queue.dropped))
        }
        let batch = browser.queue.take(upToBytes: maximumBytes)
        browsers[id] = browser
        if !batch.isEmpty { frames.append(BrowserFrames.messages(batch)) }
        return frames
    }

    /// The broker state the `hello` frame told, so the first `status` comes only with a change.
    mutating func greeted(_ id: Int, brokerConnected: Bool) { browsers[id]?.reportedBroker = brokerConnected }

    func dropped(_ id: Int) -> Int { browsers[id]?.queue.dropped ?? 0 }
    var openCount: Int { browsers.values.count { $0.phase == .open } }
    var totalDropped: Int { browsers.values.reduce(droppedByClosed) { $0 + $1.queue.dropped } }
}
