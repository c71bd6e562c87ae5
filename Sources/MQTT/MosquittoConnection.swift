#if canImport(Glibc)
import Glibc
#endif
import CMosquitto
import EventLoop
import FoundationEssentials
import Logging
import Synchronization

/// libmosquitto needs one global initialisation per process.
private let mosquittoLibraryReady: Int32 = mosquitto_lib_init()

/// What the loop thread reports to the Swift side.
enum ConnectionEvent: Sendable {
    case connected(sessionPresent: Bool)
    case disconnected(reason: String)
    case fatal(MQTTError)
    case closed
}

/// Requests from any thread to the loop thread.
enum ConnectionCommand: Sendable {
    case publish(OutgoingMessage)
    case publishDurable(OutgoingMessage, completion: @Sendable (Result<Void, MQTTError>) -> Void)
    case subscribe(filter: String, qos: QoS, retainAsPublished: Bool)
    case unsubscribe(filter: String)
    case close(finalMessages: [OutgoingMessage], timeout: Duration, completion: @Sendable () -> Void)
}

/// One libmosquitto handle, driven through its external-loop calls on an `EventLoop`.
///
/// The loop owns the MQTT socket (readable always, writable while libmosquitto has bytes it could not write) and
/// a 100 ms tick (keep-alive, reconnect attempts, connect timeouts, starting spool syncs: `SpoolSync`'s thread runs
/// them); libmosquitto is only ever touched from the loop thread. A publish from the loop thread itself (a notification decoded on the same loop) goes to
/// libmosquitto at once, with no hand-off; from another thread it is queued and the loop woken. libmosquitto's
/// callbacks run inside `mosquitto_loop_read` on the loop; they copy what they get and hand it on (AsyncStream
/// yields, counters) without blocking.
///
/// It does its own reconnecting (exponential backoff with jitter) rather than libmosquitto's, to resubscribe,
/// replay the offline ring and spool in order, and to tell a refused password from a broker that is away. What the
/// link does next is decided by `MQTTLinkStateMachine`: this class feeds it libmosquitto's results and the tick,
/// and carries out its actions.
///
/// `@unchecked Sendable`: it wraps a C handle. The inbox and statistics are behind mutexes; every other stored
/// property is confined to the loop thread (set up in `init` before the loop runs, and `lastLibraryError` also written
/// by libmosquitto's log callback on the connect thread while the loop leaves the handle alone): the methods that run
/// on the loop begin with `loop.assertInEventLoop()`, so debug builds trap when one is reached from anywhere else.
final class MosquittoConnection: @unchecked Sendable {
    private let configuration: MQTTClientConfiguration
    private let logger: Logger
    private let events: AsyncStream<ConnectionEvent>.Continuation
    private let incoming: AsyncStream<IncomingMessage>.Continuation
    /// Received messages the consumer has not taken yet: reading pauses while they fill the buffer.
    private let flow: IncomingFlow

    private let inbox = Mutex(Inbox())

    /// Commands for the loop, and whether the connection has ended (then nothing will take them).
    private struct Inbox {
        var commands: [ConnectionCommand] = []
        var ended = false
    }
    /// The loop that owns the handle (shared with the notification sockets in the daemon).
    let loop: EventLoop
    /// Whether the loop was made for this connection alone, and ends with it.
    private let ownsLoop: Bool
    /// Set by `start`; until then nothing of this connection runs on the loop.
    private let started = Atomic<Bool>(false)
    let statistics = Mutex(MQTTClientStatistics())

    // Loop-thread state.
    private var handle: OpaquePointer?
    /// Where the link stands and what to do next; this class carries out what it answers.
    private var machine: MQTTLinkStateMachine
    private var lastLibraryError: String?
    private var subscriptions: [(filter: String, qos: QoS, retainAsPublished: Bool)] = []
    /// The offline ring, the durable spool and what awaits a PUBACK.
    private var outbound: OutboundQueue
    /// The spool's fdatasync, on a thread of its own: a durable publish completes once its record is on disk.
    private let spoolSync: SpoolSync
    /// Called when the connection ends, whichever way (the close's deadline is the machine's).
    private var closeCompletion: (@Sendable () -> Void)?
    /// The socket's registration on the loop, and the interest it was given.
    private var socketRegistration: (registration: EventLoop.Registration, interest: EventLoop.Interest)?
    /// Since when the socket is not read because the consumer's buffer is full (see `wantsToRead`).
    private var readingPausedSince: ContinuousClock.Instant?
    private var tick: (id: TimerQueue<() -> Void>.ID, deadline: ContinuousClock.Instant)?
    private var iterationHook: UInt64?
    /// Property lists holding only a content type, by content type (`application/json`), reused by every publish.
    private var contentTypeProperties: [String: OpaquePointer] = [:]
    /// Messages handed to libmosquitto since the last `flushWrites`: when there are several, the socket is corked
    /// while libmosquitto writes them (see `flushWrites`).
    private var publishedSinceFlush = 0
    /// Sample packets written past libmosquitto (`PublishPacket`), all of an iteration's in one `send`. Not over
    /// TLS, where libmosquitto owns the stream.
    private var direct = DirectWrites()
    private let writesSamplesDirectly: Bool
    /// The broker's Maximum Packet Size from its CONNACK (MQTT 5), which a packet sent directly must respect too.
    private var maximumPacketSize: Int?

    /// `loop` nil: the connection runs on a loop of its own, which ends with it.
    init(configuration: MQTTClientConfiguration, logger: Logger, loop: EventLoop?,
         events: AsyncStream<ConnectionEvent>.Continuation,
         incoming: AsyncStream<IncomingMessage>.Continuation, flow: IncomingFlow) throws(MQTTError) {
        _ = mosquittoLibraryReady
        if let loop {
            self.loop = loop
            ownsLoop = false
        } else {
            do { self.loop = try EventLoop(name: "mqtt-loop") } catch { throw .invalidSetting("\(error)") }
            ownsLoop = true
        }
        self.configuration = configuration
        writesSamplesDirectly = configuration.tls == nil
        self.logger = logger
        self.events = events
        self.incoming = incoming
        self.flow = flow
        self.machine = MQTTLinkStateMachine(backoff: configuration.reconnect, connectTimeout: configuration.connectTimeout,
                                            credentialsAcceptedBefore: configuration.credentialsAcceptedBefore)
        let spool = try DurableSpool(directory: configuration.spoolDirectory, maximumBytes: configuration.spoolMaximumBytes)
        self.outbound = OutboundQueue(ring: OfflineRing(capacity: configuration.offlineQueueCapacity), spool: spool,
                                      window: configuration.durableWindow)
        self.spoolSync = SpoolSync(spool: spool)
        if let loose = spool.looseModeTightened {
            logger.warning("the durable spool's folder was open to other users; its mode is now 0700",
                           metadata: ["directory": "\(configuration.spoolDirectory)", "was": "0\(String(loose, radix: 8))"])
        }
        if spool.recoveredCorruptions > 0 {
            logger.warning("durable spool had a torn record from an earlier crash; it was cut off",
                           metadata: ["directory": "\(configuration.spoolDirectory)"])
        }
        try makeHandle()
        spoolSync.whenSyncReturns { [weak self] in
            guard let self else { return }
            self.loop.execute { [weak self] in self?.spoolSyncReturned() }
        }
        updateStatistics()
    }

    deinit {
        if let handle { mosquitto_destroy(handle) }
        for list in contentTypeProperties.values { freeProperties(list) }
    }

    func start() {
        started.store(true, ordering: .releasing)
        if ownsLoop { loop.start() }
        loop.execute { [self] in
            iterationHook = loop.whenIterationEnds { [weak self] in self?.flushWrites() }
            scheduleTick()
            step()
        }
    }

    func send(_ command: ConnectionCommand) {
        if loop.inEventLoop, !machine.isFinished, started.load(ordering: .acquiring) {
            // The data path: a sample decoded on this loop goes to libmosquitto now; the iteration's end writes it.
            handle(command)
            if case .publish = command { return }
            step()
            return
        }
        let (wasEmpty, ended) = inbox.withLock { inbox in
            if inbox.ended { return (false, true) }
            inbox.commands.append(command)
            return (inbox.commands.count == 1, false)
        }
        // After the end no step will run again: answered now, so a second `close` (a hang guard's, then the
        // owner's) or a durable publish after a fatal stop returns instead of waiting for ever.
        if ended { Self.answerAfterEnd(command); return }
        // Before `start` the commands wait in the inbox: a shared loop is already running, and `start` drains them.
        if wasEmpty, started.load(ordering: .acquiring) { loop.execute { [self] in step() } }
    }

    /// What a command gets once the connection has ended: a durable publish fails as closed, a close is done.
    private static func answerAfterEnd(_ command: ConnectionCommand) {
        if case .publishDurable(_, let completion) = command { completion(.failure(.closed)) }
        if case .close(_, _, let completion) = command { completion() }
    }

    // MARK: Handle setup

    private func makeHandle() throws(MQTTError) {
        let clean = configuration.sessionExpirySeconds == 0
        guard let handle = mosquitto_new(configuration.clientID, clean, Unmanaged.passUnretained(self).toOpaque())
        else { throw .invalidSetting("mosquitto_new failed for client id \"\(configuration.clientID)\"") }
        self.handle = handle
        let version = configuration.protocolVersion == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311
        try check(mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, version), "protocol")
        _ = mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1)
        // "Threaded": libmosquitto queues every packet the iteration publishes, and `flushWrites` writes them at its
        // end in one go, where each PUBLISH was a `send` of its own (docs/performance.md, "Writes batched per
        // iteration"). The close left unfinished when the broker went at the same moment, which reverted this on
        // 2026-11-26, does not reproduce since the link became `MQTTLinkStateMachine` (`CloseWhileTheBrokerGoesTests`);
        // the tenfold drop of request/answer traffic seen on 2026-11-28 was one request read per wake-up
        // (`readWhatIsWaiting` now reads what waits).
        _ = mosquitto_threaded_set(handle, true)
        if let username = configuration.username {
            try check(mosquitto_username_pw_set(handle, username, configuration.password), "username")
        }
        if let tls = configuration.tls {
            try check(mosquitto_tls_set(handle, tls.caFile, tls.caDirectory, tls.certificateFile, tls.keyFile, nil),
                      "tls (check ca_file, ca_dir, cert_file and key_file exist and are readable)")
            let version = tls.minimumVersion == .v1_3 ? "tlsv1.3" : "tlsv1.2"
            try check(mosquitto_tls_opts_set(handle, 1, version, nil), "tls.min_version")
            try check(mosquitto_tls_insecure_set(handle, tls.insecure), "tls.insecure")
        }
        if let will = configuration.will {
            // On success libmosquitto owns (and frees) the will's property list; on failure we do.
            let properties = configuration.protocolVersion == .v5 ? makeProperties(will.properties) : nil
            let result = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set_v5(handle, will.topic, Int32(bytes.count), bytes.baseAddress,
                                      Int32(will.qos.rawValue), will.retain, properties)
            }
            if result != MOSQ_ERR_SUCCESS.rawValue { freeProperties(properties) }
            try check(result, "will")
        }
        mosquitto_connect_v5_callback_set(handle) { _, context, reason, flags, properties in
            var maximum: UInt32 = 0
            let limited = mosquitto_property_read_int32(properties, Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue), &maximum, false) != nil
            MosquittoConnection.from(context).didReceiveConnack(reason: reason, flags: flags,
                                                                maximumPacketSize: limited ? Int(maximum) : nil)
        }
        mosquitto_disconnect_v5_callback_set(handle) { _, context, reason, _ in
            MosquittoConnection.from(context).didDisconnect(reason: reason)
        }
        mosquitto_publish_v5_callback_set(handle) { _, context, messageID, reason, _ in
            MosquittoConnection.from(context).didCompletePublish(messageID: messageID, reason: reason)
        }
        mosquitto_message_v5_callback_set(handle) { _, context, message, properties in
            guard let message else { return }
            MosquittoConnection.from(context).didReceive(message.pointee, properties: properties)
        }
        setLibraryLogging(true, handle)
    }

    /// libmosquitto formats a log line for every packet whenever a log callback is set. Its words matter while
    /// connecting (a TLS failure is only told there); once connected, they cost a formatted line per publish
    /// that nobody reads, so the callback is off unless trace logging wants them.
    private func setLibraryLogging(_ on: Bool, _ handle: OpaquePointer) {
        if on || logger.logLevel <= .trace {
            mosquitto_log_callback_set(handle) { _, context, level, text in
                guard let text else { return }
                MosquittoConnection.from(context).libraryLog(level: level, text: String(cString: text))
            }
        } else {
            mosquitto_log_callback_set(handle, nil)
        }
    }

    private static func from(_ context: UnsafeMutableRawPointer?) -> MosquittoConnection {
        Unmanaged<MosquittoConnection>.fromOpaque(context!).takeUnretainedValue()
    }

    private func check(_ result: Int32, _ what: String) throws(MQTTError) {
        guard result == MOSQ_ERR_SUCCESS.rawValue else {
            throw .invalidSetting("\(what): \(MosquittoText.error(result))")
        }
    }

    // MARK: The loop

    /// 100 ms while something is under way (connecting, reconnecting, closing, durable records to sync or send),
    /// else 1 s: enough for keep-alive, and an idle gateway wakes once a second rather than ten times.
    private var tickInterval: Duration {
        guard machine.state == .connected, outbound.isIdle else {
            return .milliseconds(100)
        }
        return .seconds(1)
    }

    private func scheduleTick() {
        let deadline = ContinuousClock.now + tickInterval
        if let tick {
            if tick.deadline <= deadline { return }
            loop.cancel(tick.id)
        }
        let id = loop.schedule(at: deadline) { [weak self] in
            self?.tick = nil
            guard let self, !self.machine.isFinished else { return }
            if !self.machine.isAttemptInFlight, let handle = self.handle, mosquitto_socket(handle) >= 0 { _ = mosquitto_loop_misc(handle) }
            self.step()
            if !self.machine.isFinished { self.scheduleTick() }
        }
        tick = (id, deadline)
    }

    /// Everything but the socket's own events: queued commands, what the link's state machine says is due
    /// (connecting, reconnecting, a connect timeout, the end of a close or a fatal error), replaying the ring and the
    /// spool, syncing the spool, and the socket's registration.
    private func step() {
        loop.assertInEventLoop()
        guard !machine.isFinished else { return }
        for command in inbox.withLock({ inbox in defer { inbox.commands.removeAll(keepingCapacity: true) }; return inbox.commands }) {
            handle(command)
        }
        let now = ContinuousClock.now
        // Everything below may end or use the handle; the attempt in flight finishes first.
        guard !machine.isAttemptInFlight else {
            updateStatistics()
            return
        }
        switch machine.tick(now: now, drained: isDrained) {
        case .finishFailed(let error):
            stop(with: .fatal(error))
            return
        case .finishClosed(let disconnect):
            finishClose(disconnect: disconnect)
            return
        case .connect:
            attemptConnection()
        case .abandonAttempt:
            logger.warning("no answer from the MQTT broker; abandoning this connection attempt")
            abortSocket()
        case .none:
            if machine.isConnected { pump() }
        case .reportConnected, .reportLost, .reportUnreachable, .warnCredentialsRefused, .sendFinalMessages:
            break  // answers to other events
        }
        spoolSync.startIfDue(now: now)
        updateStatistics()
        updateRegistration()
        // Something got under way (a durable record, a lost link): the tick comes sooner.
        scheduleTick()
    }

    /// Whether a close on an up link has nothing left to wait for.
    private var isDrained: Bool {
        outbound.isDrained && direct.isEmpty && !mosquitto_want_write(handle)
    }

    /// The socket on the loop: registered while libmosquitto has one (it changes with every connection),
    /// writable interest only while libmosquitto has bytes waiting.
    private func updateRegistration() {
        guard !machine.isAttemptInFlight else { return }
        let socket = handle.map { mosquitto_socket($0) } ?? -1
        if let current = socketRegistration, current.registration.descriptor != socket {
            loop.deregister(current.registration)
            socketRegistration = nil
        }
        guard socket >= 0 else { return }
        var interest: EventLoop.Interest = wantsToRead() ? .readable : []
        if !direct.isEmpty || mosquitto_want_write(handle) { interest.insert(.writable) }
        if let current = socketRegistration {
            if current.interest != interest {
                loop.setInterest(current.registration, interest)
                socketRegistration?.interest = interest
            }
            return
        }
        do {
            // Strong: a weak handler of a freed connection would leave a readable socket spinning the loop.
            let registration = try loop.register(socket, interest: interest) { [self] readiness in
                socketReady(readiness)
            }
            socketRegistration = (registration, interest)
        } catch {
            logger.error("cannot watch the MQTT socket", metadata: ["error": "\(error)"])
            abortSocket()
        }
    }

    /// False while the consumer's buffer is full (until it is half empty again), for at most half the keepalive:
    /// the broker's PUBACKs and PINGRESPs wait behind the unread requests, and a pause as long as the keepalive
    /// would cost the connection. After that the socket is read again and what does not fit is dropped and counted.
    private func wantsToRead() -> Bool {
        guard let since = readingPausedSince else {
            guard flow.isFull else { return true }
            readingPausedSince = .now
            statistics.withLock { $0.incomingPauses += 1 }
            return false
        }
        if flow.hasRoomAgain {
            readingPausedSince = nil
            return true
        }
        guard ContinuousClock.now - since >= .seconds(max(1, configuration.keepAliveSeconds / 2)) else { return false }
        statistics.withLock { $0.incomingPausesCutShort += 1 }
        readingPausedSince = nil
        return true
    }

    private func dropRegistration() {
        if let socketRegistration { loop.deregister(socketRegistration.registration) }
        socketRegistration = nil
    }

    private func socketReady(_ readiness: EventLoop.Readiness) {
        loop.assertInEventLoop()
        guard let handle else { return }
        var result = MOSQ_ERR_SUCCESS.rawValue
        if readiness.isReadable || readiness.isHangUp { result = readWhatIsWaiting(handle) }
        if readiness.isWritable, mosquitto_socket(handle) >= 0, sendDirect(mosquitto_socket(handle)) {
            result = mosquitto_loop_write(handle, 1)
        }
        // The handshake failed: a wrong CA or certificate will not fix itself by retrying. libmosquitto
        // reports it as MOSQ_ERR_TLS from the read or write that failed, or only in its log when the peer hung
        // up first, so both are looked at.
        if result == MOSQ_ERR_TLS.rawValue || Self.isTLSFailure(lastLibraryError) {
            _ = machine.tlsFailureSeen(lastLibraryError ?? MosquittoText.error(result))
        }
        if mosquitto_socket(handle) < 0 { linkLost(reason: lastLibraryError ?? "connection closed") }
        step()
    }

    /// libmosquitto reads one packet per `mosquitto_loop_read` (its `max_packets` is replaced by the count of QoS 1/2
    /// messages in flight), so with the data path's coalescing window (one wake-up per 2 ms when busy) a burst of
    /// requests was read at one per wake-up. While bytes wait, it reads again, up to `maximumReadRounds` packets a
    /// wake-up, so other sources still get their turn. The price: one `recv(MSG_PEEK)` per wake-up that finds
    /// nothing more. (Over TLS, OpenSSL takes what the socket holds into its own buffer, which libmosquitto drains.)
    private func readWhatIsWaiting(_ handle: OpaquePointer) -> Int32 {
        var result = mosquitto_loop_read(handle, 1)
        for _ in 1..<Self.maximumReadRounds {
            let socket = mosquitto_socket(handle)
            guard result == MOSQ_ERR_SUCCESS.rawValue, socket >= 0, socketHasBytesWaiting(socket) else { break }
            result = mosquitto_loop_read(handle, 1)
        }
        return result
    }

    private static let maximumReadRounds = 64

    /// TCP_CORK on or off; false where the socket is not TCP (a Unix socket to the broker).
    private static func setCork(_ socket: Int32, _ on: Bool) -> Bool {
        var value: Int32 = on ? 1 : 0
        return setsockopt(socket, Int32(IPPROTO_TCP), TCP_CORK, &value, socklen_t(MemoryLayout<Int32>.size)) == 0
    }

    /// At the end of every loop iteration: what this iteration published goes out now, and the writable interest
    /// follows what is left. libmosquitto writes each queued packet with a `write` of its own, and on TCP each such
    /// write is a segment sent (on loopback the broker's receive path runs in this thread's time: most of what a
    /// sample cost at 20,000/s). With several queued, the socket is corked meanwhile (TCP_CORK), so the kernel
    /// sends what they add up to in full segments once uncorked; a lone packet is written as before.
    private func flushWrites() {
        loop.assertInEventLoop()
        defer { publishedSinceFlush = 0 }
        guard !machine.isFinished, !machine.isAttemptInFlight, let handle, mosquitto_socket(handle) >= 0 else { return }
        let socket = mosquitto_socket(handle)
        if mosquitto_want_write(handle) {
            let corked = publishedSinceFlush > 1 && Self.setCork(socket, true)
            if sendDirect(socket) { _ = mosquitto_loop_write(handle, 1) }
            // The socket may be gone (a write failed): uncorking a closed descriptor number only fails.
            if corked, mosquitto_socket(handle) == socket { _ = Self.setCork(socket, false) }
        } else {
            _ = sendDirect(socket)
        }
        if mosquitto_socket(handle) < 0 { linkLost(reason: lastLibraryError ?? "connection closed") }
        updateRegistration()
    }

    /// Sends the sample packets waiting; answers whether none is left, so libmosquitto may write.
    private func sendDirect(_ socket: Int32) -> Bool {
        switch direct.send(on: socket) {
        case .sent: return true
        case .waiting: return false
        case .failed(let error):
            // libmosquitto finds the broken link on its next read or write, and the machine hears it from there.
            logger.debug("sending samples to the MQTT broker failed", metadata: ["errno": "\(error)"])
            return true
        }
    }

    /// The packet `message` is written as past libmosquitto, if it is: a sample's shape (`PublishPacket`) within
    /// the broker's Maximum Packet Size, and nothing of libmosquitto's waiting before it — a message it holds must
    /// not be overtaken.
    private func directPacket(_ message: OutgoingMessage, _ handle: OpaquePointer) -> PublishPacket? {
        guard writesSamplesDirectly, !mosquitto_want_write(handle),
              let packet = PublishPacket(message, version: configuration.protocolVersion),
              packet.size <= maximumPacketSize ?? packet.size else { return nil }
        return packet
    }

    /// Starts the attempt the machine asked for (it is `connecting`, `opening` now): on a helper thread, because
    /// libmosquitto resolves the host and connects blocking. Until it returns nothing on the loop touches the handle,
    /// so a broker that does not answer never stalls the data path.
    private func attemptConnection() {
        guard let handle else { return }
        lastLibraryError = nil
        // A new socket: nothing written for the last one may start it (the loss discarded it already, if it came).
        direct.discard()
        var properties: OpaquePointer? = nil
        if configuration.protocolVersion == .v5, configuration.sessionExpirySeconds > 0 {
            mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue),
                                         configuration.sessionExpirySeconds)
        }
        dropRegistration()
        logger.debug("connecting to the MQTT broker",
                     metadata: ["host": "\(configuration.host)", "port": "\(configuration.port)"])
        let attempt = ConnectAttempt(handle: handle, properties: properties, configuration: configuration)
        properties = nil  // the attempt frees them
        NamedThread.start("mqtt-connect") { [self] in
            let result = attempt.run()
            loop.execute { [self] in connectReturned(result) }
        }
    }

    /// The helper thread's `mosquitto_connect` returned: on success the CONNACK is awaited on the loop.
    private func connectReturned(_ result: Int32) {
        loop.assertInEventLoop()
        defer { step() }
        if result == MOSQ_ERR_SUCCESS.rawValue {
            _ = machine.socketOpened()
            return
        }
        let reason = lastLibraryError ?? MosquittoText.error(result)
        let tls = result == MOSQ_ERR_TLS.rawValue || Self.isTLSFailure(lastLibraryError)
        let now = ContinuousClock.now
        reportLinkDown(machine.connectFailed(now: now, tlsFailure: tls ? reason : nil), now: now, reason: reason)
    }

    /// libmosquitto logs OpenSSL's reasons for a failed handshake ("certificate verify failed", …).
    static func isTLSFailure(_ message: String?) -> Bool {
        guard let message else { return false }
        return message.contains("OpenSSL Error") || message.contains("SSL routines")
    }

    private func abortSocket() {
        guard let handle else { return }
        let socket = mosquitto_socket(handle)
        if socket >= 0 { shutdown(socket, Int32(SHUT_RDWR)) }
        linkLost(reason: "connect timeout")
    }

    /// The socket closed or libmosquitto disconnected. `cleanly`: with reason 0 (our own DISCONNECT while closing).
    private func linkLost(reason: String, cleanly: Bool = false) {
        // The socket is closed or about to be; a new one may get the same number, so the registration goes now.
        dropRegistration()
        direct.discard()
        let now = ContinuousClock.now
        reportLinkDown(machine.linkLost(now: now, cleanly: cleanly), now: now, reason: reason)
    }

    /// A loss or a failed attempt the machine answered: logged, and a lost link told to the client. The next attempt
    /// is the tick's (every 100 ms while the link is not up), from the instant the machine waits for.
    private func reportLinkDown(_ action: MQTTLinkStateMachine.Action, now: ContinuousClock.Instant, reason: String) {
        let retryAt: ContinuousClock.Instant?
        let wasUp: Bool
        switch action {
        case .reportLost(let at): (retryAt, wasUp) = (at, true)
        case .reportUnreachable(let at): (retryAt, wasUp) = (at, false)
        default: return
        }
        if let handle { setLibraryLogging(true, handle) }
        statistics.withLock { $0.connected = false }
        var metadata: Logger.Metadata = ["reason": "\(reason)"]
        if let retryAt { metadata["retry_in"] = "\(retryAt - now)" }
        if wasUp {
            logger.warning(retryAt == nil ? "lost the MQTT broker while closing" : "lost the MQTT broker; reconnecting",
                           metadata: metadata)
            events.yield(.disconnected(reason: reason))
        } else {
            logger.info("MQTT broker not reachable", metadata: metadata)
        }
    }

    /// The sync thread returned: the durable publishes it covered complete, and the next sync starts if one is due.
    private func spoolSyncReturned() {
        loop.assertInEventLoop()
        spoolSync.collect()
    }

    // MARK: Commands

    private func handle(_ command: ConnectionCommand) {
        loop.assertInEventLoop()
        switch command {
        case .publish(let message):
            if machine.isConnected { publishNow(message) } else { outbound.holdOffline(message) }
        case .publishDurable(let message, let completion):
            do {
                let sequence = try outbound.spool.append(message, enqueuedAtMilliseconds: Self.wallClockMilliseconds())
                // Answered by the sync thread's fdatasync that covers it, not now: "stored" means on disk.
                spoolSync.written(sequence, completion: completion)
            } catch {
                logger.error("durable message not stored", metadata: ["topic": "\(message.topic)", "error": "\(error)"])
                statistics.withLock { $0.spoolFailures += 1 }
                completion(.failure(error))
            }
        case .subscribe(let filter, let qos, let retainAsPublished):
            subscriptions.removeAll { $0.filter == filter }
            subscriptions.append((filter, qos, retainAsPublished))
            if machine.isConnected { subscribeNow(filter: filter, qos: qos, retainAsPublished: retainAsPublished) }
        case .unsubscribe(let filter):
            subscriptions.removeAll { $0.filter == filter }
            if machine.isConnected, let handle { mosquitto_unsubscribe_v5(handle, nil, filter, nil) }
        case .close(let finalMessages, let timeout, let completion):
            closeCompletion = completion
            if machine.close(deadline: .now + timeout) == .sendFinalMessages {
                for message in finalMessages {
                    if let id = publishNow(message), message.qos > .atMostOnce { outbound.sentFinalMessage(messageID: id) }
                }
            }
        }
    }

    /// Replays the offline ring, then feeds spooled durable messages to the broker within the window.
    private func pump() {
        while machine.isConnected, let message = outbound.nextOffline() { publishNow(message) }
        while machine.isConnected {
            let durable: OutboundQueue.DurableMessage?
            do { durable = try outbound.nextDurable(nowMilliseconds: Self.wallClockMilliseconds()) } catch {
                logger.error("durable spool unreadable; stopping its replay", metadata: ["error": "\(error)"])
                return
            }
            guard let durable else { return }
            outbound.sent(durable, messageID: publishNow(durable.message))
        }
    }

    /// When a durable message was spooled, for its expiry: wall-clock time, as it must hold across restarts.
    private static func wallClockMilliseconds() -> UInt64 { UInt64(Date().timeIntervalSince1970 * 1000) }

    /// The kept property list for properties that are a content type alone; nil for any other properties.
    private func sharedProperties(_ properties: MQTTProperties) -> OpaquePointer? {
        guard let type = properties.contentType, properties.responseTopic == nil, properties.correlationData == nil,
              properties.messageExpiryInterval == nil, properties.userProperties.isEmpty else { return nil }
        if let list = contentTypeProperties[type] { return list }
        guard contentTypeProperties.count < 8, let list = makeProperties(properties) else { return nil }
        contentTypeProperties[type] = list
        return list
    }

    /// Hands one message to libmosquitto. Returns its message id when libmosquitto accepted or queued it.
    @discardableResult
    private func publishNow(_ message: OutgoingMessage) -> Int32? {
        guard let handle else { return nil }
        if let packet = directPacket(message, handle) {
            direct.append(packet)
            statistics.withLock { $0.published += 1 }
            return 0
        }
        // Most messages carry only a content type: its property list is built once and reused (libmosquitto
        // copies properties into the packet), saving three allocations a message.
        let shared = configuration.protocolVersion == .v5 ? sharedProperties(message.properties) : nil
        let properties = configuration.protocolVersion == .v5 && shared == nil ? makeProperties(message.properties) : nil
        defer { freeProperties(properties) }
        var messageID: Int32 = 0
        // `withCString`, not the implicit String → char* conversion, which copies the topic into a new array.
        let result = message.topic.withCString { topic in
            message.payload.withUnsafeBytes { bytes in
                mosquitto_publish_v5(handle, &messageID, topic, Int32(bytes.count), bytes.baseAddress,
                                     Int32(message.qos.rawValue), message.retain, shared ?? properties)
            }
        }
        switch result {
        case MOSQ_ERR_SUCCESS.rawValue:
            statistics.withLock { $0.published += 1 }
            publishedSinceFlush += 1
            return messageID
        case MOSQ_ERR_NO_CONN.rawValue, MOSQ_ERR_CONN_LOST.rawValue:
            // QoS > 0 stays in libmosquitto's queue and is resent after the reconnect; QoS 0 is ours to keep.
            if message.qos == .atMostOnce {
                outbound.holdOffline(message)
                return nil
            }
            return messageID
        default:
            logger.error("MQTT publish refused", metadata: ["topic": "\(message.topic)", "error": "\(MosquittoText.error(result))"])
            return nil
        }
    }

    private func subscribeNow(filter: String, qos: QoS, retainAsPublished: Bool) {
        guard let handle else { return }
        // Retain As Published exists from MQTT 5 on; under 3.1.1 a live message always arrives with retain 0.
        let options = retainAsPublished && configuration.protocolVersion == .v5 ? Int32(MQTT_SUB_OPT_RETAIN_AS_PUBLISHED.rawValue) : 0
        let result = mosquitto_subscribe_v5(handle, nil, filter, Int32(qos.rawValue), options, nil)
        if result != MOSQ_ERR_SUCCESS.rawValue {
            logger.error("MQTT subscribe failed", metadata: ["filter": "\(filter)", "error": "\(MosquittoText.error(result))"])
        }
    }

    // MARK: libmosquitto callbacks (loop thread, inside mosquitto_loop_read)

    private func didReceiveConnack(reason: Int32, flags: Int32, maximumPacketSize: Int?) {
        loop.assertInEventLoop()
        self.maximumPacketSize = maximumPacketSize
        guard reason == 0 else {
            let text = configuration.protocolVersion == .v5 ? MosquittoText.reason(reason) : MosquittoText.connack(reason)
            lastLibraryError = "broker refused the connection: \(text)"
            statistics.withLock { $0.refusedConnections += 1 }
            let authentication: Set<Int32> = configuration.protocolVersion == .v5 ? [0x86, 0x87, 0x8C] : [4, 5]
            if machine.connackRefused(credentials: authentication.contains(reason) ? text : nil) == .warnCredentialsRefused {
                logger.error("the MQTT broker now refuses our credentials; retrying", metadata: ["reason": "\(text)"])
            }
            return
        }
        guard machine.connackAccepted() == .reportConnected else { return }
        if let handle { setLibraryLogging(false, handle) }
        statistics.withLock {
            $0.connected = true
            $0.connections += 1
        }
        logger.info("connected to the MQTT broker",
                    metadata: ["host": "\(configuration.host)", "port": "\(configuration.port)",
                               "protocol": "\(configuration.protocolVersion.rawValue)"])
        for subscription in subscriptions {
            subscribeNow(filter: subscription.filter, qos: subscription.qos, retainAsPublished: subscription.retainAsPublished)
        }
        events.yield(.connected(sessionPresent: flags & 1 != 0))
    }

    private func didDisconnect(reason: Int32) {
        loop.assertInEventLoop()
        if let handle { setLibraryLogging(true, handle) }
        linkLost(reason: lastLibraryError ?? (reason == 0 ? "disconnected" : MosquittoText.error(reason)), cleanly: reason == 0)
    }

    private func didCompletePublish(messageID: Int32, reason: Int32) {
        loop.assertInEventLoop()
        guard outbound.completed(messageID: messageID) else { return }
        if reason >= 0x80 {
            logger.error("the MQTT broker rejected a durable message; it is dropped",
                         metadata: ["reason": "\(MosquittoText.reason(reason))"])
            statistics.withLock { $0.durableRejectedByBroker += 1 }
        }
    }

    private func didReceive(_ message: mosquitto_message, properties: OpaquePointer?) {
        loop.assertInEventLoop()
        let topic = String(cString: message.topic)
        let length = Int(message.payloadlen)
        // An oversized payload is not copied: the message goes on without it, so its requester can be answered.
        let oversized = length > configuration.maximumIncomingPayload
        let payload = length > 0 && !oversized ? Array(UnsafeRawBufferPointer(start: message.payload, count: length)) : []
        if oversized { statistics.withLock { $0.incomingOversized += 1 } }
        let copy = IncomingMessage(topic: topic, payload: payload, qos: QoS(rawValue: Int(message.qos)) ?? .atMostOnce,
                                   retain: message.retain, properties: readProperties(properties),
                                   droppedPayloadBytes: oversized ? length : 0)
        let bytes = copy.bufferedBytes
        guard flow.hasRoom(for: bytes) else {
            statistics.withLock { $0.incomingDropped += 1 }
            return
        }
        if case .dropped = incoming.yield(copy) {
            statistics.withLock { $0.incomingDropped += 1 }
        } else {
            flow.added(bytes: bytes)
        }
    }

    private func libraryLog(level: Int32, text: String) {
        if level & (MOSQ_LOG_ERR | MOSQ_LOG_WARNING) != 0 {
            lastLibraryError = text
            logger.debug("libmosquitto", metadata: ["message": "\(text)"])
        } else {
            logger.trace("libmosquitto", metadata: ["message": "\(text)"])
        }
    }

    // MARK: Shutdown

    /// `disconnect`: the link is up, so the broker is told (and discards the will).
    private func finishClose(disconnect: Bool) {
        if disconnect, let handle {
            mosquitto_disconnect_v5(handle, 0, nil)
            // DISCONNECT goes after the samples sent directly, never inside one whose rest the socket did not take.
            if mosquitto_socket(handle) >= 0, sendDirect(mosquitto_socket(handle)) { _ = mosquitto_loop_write(handle, 1) }
        }
        stop(with: .closed)
    }

    /// The end the machine answered (it is `finished` now).
    private func stop(with event: ConnectionEvent) {
        loop.assertInEventLoop()
        dropRegistration()
        if let tick { loop.cancel(tick.id) }
        if let iterationHook { loop.removeIterationHook(iterationHook) }
        if ownsLoop { loop.stop() }
        spoolSync.close()
        updateStatistics()
        statistics.withLock { $0.connected = false }
        if let handle {
            mosquitto_destroy(handle)
            self.handle = nil
        }
        closeCompletion?()
        closeCompletion = nil
        // Commands waiting now, and any sent from now on, are answered so no caller waits forever.
        for command in inbox.withLock({ inbox in
            inbox.ended = true
            defer { inbox.commands.removeAll() }
            return inbox.commands
        }) {
            Self.answerAfterEnd(command)
        }
        events.yield(event)
        events.finish()
        incoming.finish()
    }

    private func updateStatistics() {
        let queued = outbound.ring.count, dropped = outbound.ring.dropped
        let pending = outbound.spool.pendingCount, bytes = outbound.spool.totalBytes
        statistics.withLock {
            $0.offlineQueued = queued
            $0.offlineDropped = dropped
            $0.spoolPending = pending
            $0.spoolBytes = bytes
        }
    }
}

// MARK: MQTT 5 properties

private func makeProperties(_ properties: MQTTProperties) -> OpaquePointer? {
    guard !properties.isEmpty else { return nil }
    var list: OpaquePointer? = nil
    if let topic = properties.responseTopic {
        mosquitto_property_add_string(&list, Int32(MQTT_PROP_RESPONSE_TOPIC.rawValue), topic)
    }
    if let data = properties.correlationData {
        data.withUnsafeBytes { bytes in
            _ = mosquitto_property_add_binary(&list, Int32(MQTT_PROP_CORRELATION_DATA.rawValue), bytes.baseAddress,
                                              UInt16(clamping: bytes.count))
        }
    }
    if let type = properties.contentType {
        mosquitto_property_add_string(&list, Int32(MQTT_PROP_CONTENT_TYPE.rawValue), type)
    }
    if let expiry = properties.messageExpiryInterval {
        mosquitto_property_add_int32(&list, Int32(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue), expiry)
    }
    for pair in properties.userProperties {
        mosquitto_property_add_string_pair(&list, Int32(MQTT_PROP_USER_PROPERTY.rawValue), pair.name, pair.value)
    }
    return list
}

private func freeProperties(_ list: OpaquePointer?) {
    var list = list
    if list != nil { mosquitto_property_free_all(&list) }
}

private func readProperties(_ list: OpaquePointer?) -> MQTTProperties {
    var result = MQTTProperties()
    guard let list else { return result }
    var text: UnsafeMutablePointer<CChar>? = nil
    if mosquitto_property_read_string(list, Int32(MQTT_PROP_RESPONSE_TOPIC.rawValue), &text, false) != nil, let text {
        result.responseTopic = String(cString: text)
        free(text)
    }
    var contentType: UnsafeMutablePointer<CChar>? = nil
    if mosquitto_property_read_string(list, Int32(MQTT_PROP_CONTENT_TYPE.rawValue), &contentType, false) != nil,
       let contentType {
        result.contentType = String(cString: contentType)
        free(contentType)
    }
    var binary: UnsafeMutableRawPointer? = nil
    var length: UInt16 = 0
    if mosquitto_property_read_binary(list, Int32(MQTT_PROP_CORRELATION_DATA.rawValue), &binary, &length, false) != nil {
        result.correlationData = binary.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
        free(binary)
    }
    var expiry: UInt32 = 0
    if mosquitto_property_read_int32(list, Int32(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue), &expiry, false) != nil {
        result.messageExpiryInterval = expiry
    }
    var cursor: OpaquePointer? = list
    var skipFirst = false
    while true {
        var name: UnsafeMutablePointer<CChar>? = nil
        var value: UnsafeMutablePointer<CChar>? = nil
        guard let found = mosquitto_property_read_string_pair(cursor, Int32(MQTT_PROP_USER_PROPERTY.rawValue),
                                                                &name, &value, skipFirst) else { break }
        if let name, let value { result.userProperties.append((String(cString: name), String(cString: value))) }
        free(name)
        free(value)
        cursor = found
        skipFirst = true
    }
    return result
}

/// One blocking `mosquitto_connect_bind_v5`, made on a helper thread while the loop leaves the handle alone.
/// `@unchecked Sendable`: the handle is used by this attempt alone until it returns.
private struct ConnectAttempt: @unchecked Sendable {
    let handle: OpaquePointer
    let properties: OpaquePointer?
    let configuration: MQTTClientConfiguration

    func run() -> Int32 {
        defer { freeProperties(properties) }
        return mosquitto_connect_bind_v5(handle, configuration.host, Int32(configuration.port),
                                         Int32(configuration.keepAliveSeconds), nil, properties)
    }
}
