#if canImport(Glibc)
import Glibc
#endif
import CDBus
import EventLoop
import FoundationEssentials
import Logging
import Synchronization

/// libdbus's global thread support; libdbus needs it once before connections are shared with other threads.
private let libdbusThreadsReady: UInt32 = dbus_threads_init_default()

/// One libdbus connection, driven on an `EventLoop`.
///
/// The loop watches the connection's descriptors (libdbus says which and for what; one registration per
/// descriptor, as libdbus keeps a read and a write watch on the same socket), runs its timeouts as loop timers,
/// dispatches incoming messages to a filter, and drains an inbox of commands that other threads append to.
/// libdbus is touched from the loop thread only (and from `init`, before the loop runs). Method-call replies are
/// matched by serial with our own deadlines, so a call's timeout never blocks anything.
///
/// `@unchecked Sendable`: it wraps a C handle; the inbox is behind a mutex and all other state is confined to the
/// loop thread (and `init`): the methods that run on the loop begin with `eventLoop.assertInEventLoop()`, so debug
/// builds trap when one is reached from anywhere else.
final class ConnectionLoop: @unchecked Sendable {
    enum Command: Sendable {
        case send(OutgoingBusMessage, timeout: Duration?, reply: (@Sendable (Result<BusMessage, BusError>) -> Void)?)
        /// `intercept` sees each matching signal first, on the loop thread; when it answers true the stream does
        /// not get it.
        case subscribe(id: UInt64, rule: MatchRule, continuation: AsyncStream<BusSignal>.Continuation,
                       intercept: (@Sendable (BusSignal) -> Bool)?)
        case unsubscribe(id: UInt64)
        /// A byte-array property whose lone changes go straight to a handler (`PropertyValueWatches`).
        case watchPropertyValue(PropertyValueWatches.Watch)
        case unwatchPropertyValue(id: UInt64)
        /// Signals matching `rules` come on this socket from now on (`SignalSocket`); it is watched on the loop.
        case attachSignalSocket(SignalSocket, rules: [MatchRule])
        /// Starts tracking `name`'s owner (unknown until one of the next two arrives).
        case trackOwner(name: String)
        /// GetNameOwner's answer; ignored when a NameOwnerChanged for the name arrived since tracking began,
        /// because that signal is newer than the answer.
        case initialOwner(name: String, owner: String)
        case close
    }

    private let connection: OpaquePointer
    private let logger: Logger
    private let inbox = Mutex<[Command]>([])
    /// Set under `inbox`'s lock when the loop finishes: a command sent after that is answered at once (a call gets
    /// `.disconnected`) instead of waiting in an inbox nobody drains, its caller's continuation leaked.
    private var inboxClosed = false
    /// The loop it runs on: its own unless one is given (the daemon could share its data-path loop).
    let eventLoop: EventLoop
    private let ownsLoop: Bool
    /// Set by `start`; until then nothing of this connection runs on the loop.
    private let started = Atomic<Bool>(false)
    /// A step asked for by `wake` and not begun yet.
    private let wakeScheduled = Atomic<Bool>(false)
    let uniqueName: String
    let canPassFileDescriptors: Bool
    /// Incoming method calls go here (the object registry), on the loop thread.
    private let onMethodCall: @Sendable (BusMessage) -> Void
    private let onDisconnect: @Sendable () -> Void

    // Loop-thread state.
    private var watches: [OpaquePointer] = []
    /// Each watched descriptor's registration and the interest it was given.
    private var registrations: [Int32: (registration: EventLoop.Registration, interest: EventLoop.Interest)] = [:]
    /// libdbus added, removed or toggled a watch since the registrations were last brought in line.
    private var watchesChanged = true
    private var timer: (id: TimerQueue<() -> Void>.ID, deadline: ContinuousClock.Instant)?
    private var finished = false
    private var timeouts: [(timeout: OpaquePointer, deadline: ContinuousClock.Instant)] = []
    private var pending: [UInt32: (deadline: ContinuousClock.Instant?, member: String,
                                   reply: @Sendable (Result<BusMessage, BusError>) -> Void)] = [:]
    private var subscribers: [UInt64: (rule: MatchRule, continuation: AsyncStream<BusSignal>.Continuation,
                                       intercept: (@Sendable (BusSignal) -> Bool)?)] = [:]
    private var propertyValueWatches = PropertyValueWatches()
    private var signalSocket: (socket: SignalSocket, registration: EventLoop.Registration, rules: [MatchRule])?
    private var owners: [String: String] = [:] {
        didSet { lastOwner = nil }
    }
    /// The last answer of `owner(of:)`: every watched signal asks who owns the same name (`org.bluez`), and a short
    /// name compares in a few instructions where the dictionary hashes it.
    private var lastOwner: (name: String, owner: String?)?
    private var ownersAwaitingAnswer = Set<String>()
    private var isClosed = false

    /// Opens a private connection (never exits the process when the bus goes away) and registers with the bus.
    init(address: BusAddress, logger: Logger, loop: EventLoop?, onMethodCall: @escaping @Sendable (BusMessage) -> Void,
         onDisconnect: @escaping @Sendable () -> Void) throws(BusError) {
        _ = libdbusThreadsReady
        if let loop {
            eventLoop = loop
            ownsLoop = false
        } else {
            do { eventLoop = try EventLoop(name: "dbus") } catch { throw .connectionFailed("\(error)") }
            ownsLoop = true
        }
        self.logger = logger
        self.onMethodCall = onMethodCall
        self.onDisconnect = onDisconnect
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let opened: OpaquePointer?
        switch address {
        case .system: opened = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error)
        case .session: opened = dbus_bus_get_private(DBUS_BUS_SESSION, &error)
        case .address(let text):
            let connection = dbus_connection_open_private(text, &error)
            if let connection, dbus_bus_register(connection, &error) == 0 {
                dbus_connection_close(connection)
                dbus_connection_unref(connection)
                opened = nil
            } else {
                opened = connection
            }
        }
        guard let opened else {
            let message = dbus_error_is_set(&error) != 0 && error.message != nil ? String(cString: error.message) : "unknown error"
            throw .connectionFailed(message)
        }
        connection = opened
        dbus_connection_set_exit_on_disconnect(connection, 0)
        uniqueName = dbus_bus_get_unique_name(connection).map { String(cString: $0) } ?? ""
        canPassFileDescriptors = dbus_connection_can_send_type(connection, TypeCode.unixFD) != 0
        installCallbacks()
    }

    func start(name: String) {
        started.store(true, ordering: .releasing)
        if ownsLoop { eventLoop.start() }
        eventLoop.execute { [self] in step() }
    }

    func send(_ command: Command) {
        let wasEmpty = inbox.withLock { queue -> Bool? in
            guard !inboxClosed else { return nil }
            queue.append(command)
            return queue.count == 1
        }
        guard let wasEmpty else { return Self.refuse(command) }
        if wasEmpty { wake() }
    }

    /// A command for a loop that has finished: what `finish` does for the commands it found waiting.
    private static func refuse(_ command: Command) {
        switch command {
        case .send(_, _, let reply): reply?(.failure(.disconnected))
        case .subscribe(_, _, let continuation, _): continuation.finish()
        default: break
        }
    }

    /// libdbus asks for its main loop. Before `start` the loop must not run: `init` is still calling libdbus and
    /// filling `watches` on its own thread, and a shared loop (the daemon's, already running) would race it.
    /// libdbus asks for a wake-up with every message it queues, so a StartNotify stream asked for a step per signal
    /// (each one a task on the loop that found the signal dispatched already). One step scheduled at a time serves
    /// all the asks before it begins; an ask during the step schedules the next.
    private func wake() {
        guard started.load(ordering: .acquiring),
              !wakeScheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        eventLoop.execute { [self] in
            wakeScheduled.store(false, ordering: .releasing)
            step()
        }
    }

    // MARK: libdbus callbacks

    private static func loop(_ data: UnsafeMutableRawPointer?) -> ConnectionLoop {
        Unmanaged<ConnectionLoop>.fromOpaque(data!).takeUnretainedValue()
    }

    private func installCallbacks() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_set_watch_functions(connection, { watch, data in
            guard let watch else { return 0 }
            let loop = ConnectionLoop.loop(data)
            loop.watches.append(watch)
            loop.watchesChanged = true
            return 1
        }, { watch, data in
            let loop = ConnectionLoop.loop(data)
            loop.watches.removeAll { $0 == watch }
            // Now, before libdbus closes the socket and its number can be reused by another registration.
            if loop.eventLoop.inEventLoop { loop.syncWatches() } else { loop.watchesChanged = true }
        }, { _, data in
            ConnectionLoop.loop(data).watchesChanged = true
        }, context, nil)
        dbus_connection_set_timeout_functions(connection, { timeout, data in
            guard let timeout else { return 0 }
            let interval = Duration.milliseconds(Int64(dbus_timeout_get_interval(timeout)))
            ConnectionLoop.loop(data).timeouts.append((timeout, .now + interval))
            return 1
        }, { timeout, data in
            ConnectionLoop.loop(data).timeouts.removeAll { $0.timeout == timeout }
        }, { timeout, data in
            guard let timeout else { return }
            let loop = ConnectionLoop.loop(data)
            let interval = Duration.milliseconds(Int64(dbus_timeout_get_interval(timeout)))
            if let index = loop.timeouts.firstIndex(where: { $0.timeout == timeout }) {
                loop.timeouts[index].deadline = .now + interval
            }
        }, context, nil)
        dbus_connection_set_wakeup_main_function(connection, { data in
            ConnectionLoop.loop(data).wake()
        }, context, nil)
        dbus_connection_add_filter(connection, { _, message, data in
            guard let message else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
            ConnectionLoop.loop(data).received(message)
            return DBUS_HANDLER_RESULT_HANDLED
        }, context, nil)
    }

    // MARK: The loop

    /// Everything but a descriptor's own readiness: commands, dispatching, expired calls, due timeouts, and the
    /// registrations and the timer brought in line with what libdbus wants now.
    private func step() {
        eventLoop.assertInEventLoop()
        guard !finished else { return }
        for command in inbox.withLock({ queue in defer { queue.removeAll(keepingCapacity: true) }; return queue }) {
            handle(command)
            if isClosed { break }
        }
        if !isClosed { dispatchAll() }
        if !isClosed { expirePendingCalls() }
        if !isClosed { runDueTimeouts() }
        if isClosed {
            finish()
            return
        }
        if watchesChanged { syncWatches() }
        scheduleTimer()
    }

    /// One registration per descriptor, for the union of its enabled watches' flags.
    private func syncWatches() {
        eventLoop.assertInEventLoop()
        guard !finished else { return }
        watchesChanged = false
        var wanted: [Int32: EventLoop.Interest] = [:]
        for watch in watches where dbus_watch_get_enabled(watch) != 0 {
            let flags = dbus_watch_get_flags(watch)
            var interest: EventLoop.Interest = []
            if flags & DBUS_WATCH_READABLE.rawValue != 0 { interest.insert(.readable) }
            if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { interest.insert(.writable) }
            wanted[dbus_watch_get_unix_fd(watch), default: []].formUnion(interest)
        }
        for (fd, current) in registrations where wanted[fd] == nil || wanted[fd] == [] {
            eventLoop.deregister(current.registration)
            registrations[fd] = nil
        }
        for (fd, interest) in wanted where !interest.isEmpty {
            if let current = registrations[fd] {
                if current.interest != interest {
                    eventLoop.setInterest(current.registration, interest)
                    registrations[fd]?.interest = interest
                }
                continue
            }
            do {
                // Strong: the loop keeps the connection alive while it watches it (until `finish`), as its thread did.
                let registration = try eventLoop.register(fd, interest: interest) { [self] readiness in
                    ready(fd, readiness)
                }
                registrations[fd] = (registration, interest)
            } catch {
                logger.error("cannot watch the D-Bus connection", metadata: ["error": "\(error)"])
            }
        }
    }

    /// A watched descriptor is ready: each of its watches handles what it is ready for.
    private func ready(_ fd: Int32, _ readiness: EventLoop.Readiness) {
        eventLoop.assertInEventLoop()
        for watch in watches where dbus_watch_get_unix_fd(watch) == fd && dbus_watch_get_enabled(watch) != 0 {
            let wants = dbus_watch_get_flags(watch)
            var flags: UInt32 = 0
            if readiness.isReadable, wants & DBUS_WATCH_READABLE.rawValue != 0 { flags |= DBUS_WATCH_READABLE.rawValue }
            if readiness.isWritable, wants & DBUS_WATCH_WRITABLE.rawValue != 0 { flags |= DBUS_WATCH_WRITABLE.rawValue }
            if readiness.isHangUp { flags |= DBUS_WATCH_HANGUP.rawValue | DBUS_WATCH_ERROR.rawValue }
            guard flags != 0 else { continue }
            dbus_watch_handle(watch, flags)
            if finished { return }
            if flags & DBUS_WATCH_READABLE.rawValue != 0 { readWhatIsWaiting(watch, fd) }
            if finished { return }
        }
        step()
    }

    /// libdbus reads at most a few KiB per `dbus_watch_handle` (its `max_bytes_read_per_iteration`), some twenty
    /// notifications' signals; with the data path's coalescing window (one wake-up per 2 ms when busy) that held
    /// StartNotify near 6,000 notifications/s. While more bytes wait, what was read is dispatched and libdbus reads
    /// again, up to `maximumReadRounds` times a wake-up, so one wake-up takes what came and other sources still get
    /// their turn. The price: one `recv(MSG_PEEK)` per readable wake-up that finds nothing more.
    private func readWhatIsWaiting(_ watch: OpaquePointer, _ fd: Int32) {
        for _ in 1..<Self.maximumReadRounds {
            dispatchAll()
            // Dispatching may have made libdbus remove the watch: only one it still has is asked again.
            guard !isClosed, !finished, watches.contains(watch), dbus_watch_get_enabled(watch) != 0,
                  socketHasBytesWaiting(fd) else { return }
            dbus_watch_handle(watch, DBUS_WATCH_READABLE.rawValue)
            if finished { return }
        }
    }

    private static let maximumReadRounds = 32

    /// libdbus's timeouts whose interval passed run, and start their interval again.
    private func runDueTimeouts() {
        let now = ContinuousClock.now
        for entry in timeouts where entry.deadline <= now && dbus_timeout_get_enabled(entry.timeout) != 0 {
            guard timeouts.contains(where: { $0.timeout == entry.timeout }) else { continue }
            dbus_timeout_handle(entry.timeout)
            if let index = timeouts.firstIndex(where: { $0.timeout == entry.timeout }) {
                timeouts[index].deadline = now + .milliseconds(Int64(dbus_timeout_get_interval(entry.timeout)))
            }
        }
    }

    /// One loop timer for the nearest of libdbus's timeouts and our calls' deadlines.
    private func scheduleTimer() {
        eventLoop.assertInEventLoop()
        var nearest: ContinuousClock.Instant?
        for entry in timeouts where dbus_timeout_get_enabled(entry.timeout) != 0 { nearest = min(nearest ?? entry.deadline, entry.deadline) }
        for call in pending.values { if let deadline = call.deadline { nearest = min(nearest ?? deadline, deadline) } }
        if timer?.deadline == nearest { return }
        if let timer { eventLoop.cancel(timer.id) }
        timer = nil
        guard let nearest else { return }
        let id = eventLoop.schedule(at: nearest) { [weak self] in
            self?.timer = nil
            self?.step()
        }
        timer = (id, nearest)
    }

    private func dispatchAll() {
        while !isClosed && dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS {}
    }

    private func expirePendingCalls() {
        let now = ContinuousClock.now
        for (serial, call) in pending {
            if let deadline = call.deadline, deadline <= now {
                pending[serial] = nil
                call.reply(.failure(.timeout(member: call.member)))
            }
        }
    }

    private func handle(_ command: Command) {
        eventLoop.assertInEventLoop()
        switch command {
        case .send(let message, let timeout, let reply):
            sendNow(message, timeout: timeout, reply: reply)
        case .subscribe(let id, let rule, let continuation, let intercept):
            subscribers[id] = (rule, continuation, intercept)
        case .unsubscribe(let id):
            subscribers[id]?.continuation.finish()
            subscribers[id] = nil
        case .watchPropertyValue(let watch):
            propertyValueWatches.add(watch)
        case .unwatchPropertyValue(let id):
            propertyValueWatches.remove(id: id)
        case .attachSignalSocket(let socket, let rules):
            attach(socket, rules: rules)
        case .trackOwner(let name):
            if owners[name] == nil { owners[name] = "" }
            ownersAwaitingAnswer.insert(name)
        case .initialOwner(let name, let owner):
            if ownersAwaitingAnswer.remove(name) != nil { owners[name] = owner }
        case .close:
            isClosed = true
        }
    }

    private func sendNow(_ outgoing: OutgoingBusMessage, timeout: Duration?,
                         reply: (@Sendable (Result<BusMessage, BusError>) -> Void)?) {
        guard let message = Self.makeMessage(outgoing) else {
            reply?(.failure(.invalidArguments("cannot build \(outgoing.memberDescription)")))
            return
        }
        defer { dbus_message_unref(message) }
        guard MessageCoding.append(outgoing.body, to: message) else {
            reply?(.failure(.invalidArguments("cannot encode the arguments of \(outgoing.memberDescription)")))
            return
        }
        if reply == nil, case .methodCall = outgoing.kind { dbus_message_set_no_reply(message, 1) }
        var serial: UInt32 = 0
        guard dbus_connection_send(connection, message, &serial) != 0 else {
            reply?(.failure(.disconnected))
            return
        }
        if let reply {
            pending[serial] = (timeout.map { .now + $0 }, outgoing.memberDescription, reply)
        }
    }

    private static func makeMessage(_ outgoing: OutgoingBusMessage) -> OpaquePointer? {
        switch outgoing.kind {
        case .methodCall(let destination, let path, let interface, let member):
            return dbus_message_new_method_call(destination, path.rawValue, interface, member)
        case .signal(let path, let interface, let member, let destination):
            let message = dbus_message_new_signal(path.rawValue, interface, member)
            if let message, let destination { dbus_message_set_destination(message, destination) }
            return message
        case .methodReturn(let replySerial, let destination):
            guard let message = dbus_message_new(DBUS_MESSAGE_TYPE_METHOD_RETURN) else { return nil }
            dbus_message_set_reply_serial(message, replySerial)
            if let destination { dbus_message_set_destination(message, destination) }
            dbus_message_set_no_reply(message, 1)
            return message
        case .error(let replySerial, let destination, let name, let text):
            guard let message = dbus_message_new(DBUS_MESSAGE_TYPE_ERROR) else { return nil }
            dbus_message_set_reply_serial(message, replySerial)
            if let destination { dbus_message_set_destination(message, destination) }
            dbus_message_set_error_name(message, name)
            dbus_message_set_no_reply(message, 1)
            _ = MessageCoding.append([.string(text)], to: message)
            return message
        }
    }

    // MARK: Incoming

    private func received(_ raw: OpaquePointer) {
        if !propertyValueWatches.isEmpty, propertyValueWatches.deliver(raw, owner: owner(of:)) { return }
        let message = Self.copy(raw)
        switch message.kind {
        case .methodReturn, .error:
            guard let call = pending.removeValue(forKey: message.replySerial) else { return }
            if message.kind == .error {
                call.reply(.failure(.remote(name: message.errorName ?? "org.freedesktop.DBus.Error.Failed",
                                            message: message.body.first?.stringValue ?? "")))
            } else {
                call.reply(.success(message))
            }
        case .signal:
            if message.interface == "org.freedesktop.DBus.Local" && message.member == "Disconnected" {
                logger.warning("the D-Bus connection was closed by the bus")
                isClosed = true
                return
            }
            if message.interface == "org.freedesktop.DBus", message.member == "NameOwnerChanged",
               message.sender == "org.freedesktop.DBus", let name = message.body.first?.stringValue,
               owners.keys.contains(name) {
                let newOwner = message.body.count > 2 ? message.body[2].stringValue ?? "" : ""
                owners[name] = newOwner.isEmpty ? "" : newOwner
                ownersAwaitingAnswer.remove(name)
            }
            deliverSignal(message)
        case .methodCall:
            onMethodCall(message)
        }
    }

    private func deliverSignal(_ message: BusSignal) {
        for subscriber in subscribers.values {
            let owner = subscriber.rule.sender.flatMap { owners[$0] }
            if subscriber.rule.matches(message, senderOwner: owner) {
                if let intercept = subscriber.intercept, intercept(message) { continue }
                subscriber.continuation.yield(message)
            }
        }
    }

    // MARK: The signal socket

    private func attach(_ socket: SignalSocket, rules: [MatchRule]) {
        eventLoop.assertInEventLoop()
        guard signalSocket == nil else { return }
        do {
            // Only a lost socket needs the rest of a step (which would ask libdbus to dispatch, for nothing).
            let registration = try eventLoop.register(socket.descriptor, interest: .readable) { [self] _ in
                readSignalSocket()
                if isClosed { step() }
            }
            signalSocket = (socket, registration, rules)
            // What came while it was being opened is in its buffer already.
            readSignalSocket()
        } catch {
            logger.error("cannot watch the D-Bus signal socket", metadata: ["error": "\(error)"])
            isClosed = true
        }
    }

    /// Lone value changes go to their watches straight from the socket's buffer; any other signal that matches the
    /// socket's rules is decoded by libdbus and goes where the main socket's signals go. Losing the socket loses the
    /// connection, as losing the bus does: its owner reconnects, and no signal is dropped without anyone knowing.
    private func readSignalSocket() {
        guard let (socket, _, rules) = signalSocket, !isClosed else { return }
        do {
            _ = try socket.receive(rounds: Self.maximumReadRounds) { bytes in
                if !propertyValueWatches.isEmpty, let message = WireMessage(bytes),
                   propertyValueWatches.deliver(message, owner: owner(of:)) { return true }
                guard let raw = dbus_message_demarshal(bytes.baseAddress, Int32(bytes.count), nil) else { return false }
                defer { dbus_message_unref(raw) }
                guard dbus_message_get_type(raw) == DBUS_MESSAGE_TYPE_SIGNAL else { return true }
                let message = Self.copy(raw)
                if rules.contains(where: { rule in rule.matches(message, senderOwner: rule.sender.flatMap { owners[$0] }) }) {
                    deliverSignal(message)
                }
                return true
            }
        } catch {
            logger.error("the D-Bus signal socket is lost; closing the connection", metadata: ["error": "\(error)"])
            isClosed = true
        }
    }

    /// The unique name that owns `name` now ("" while nobody does), if it is tracked.
    private func owner(of name: String) -> String? {
        if let lastOwner, lastOwner.name == name { return lastOwner.owner }
        let owner = owners[name]
        lastOwner = (name, owner)
        return owner
    }

    private static func copy(_ raw: OpaquePointer) -> BusMessage {
        func text(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
        let kind: BusMessage.Kind
        switch dbus_message_get_type(raw) {
        case DBUS_MESSAGE_TYPE_METHOD_CALL: kind = .methodCall
        case DBUS_MESSAGE_TYPE_METHOD_RETURN: kind = .methodReturn
        case DBUS_MESSAGE_TYPE_ERROR: kind = .error
        default: kind = .signal
        }
        return BusMessage(
            kind: kind, serial: dbus_message_get_serial(raw), replySerial: dbus_message_get_reply_serial(raw),
            sender: text(dbus_message_get_sender(raw)), destination: text(dbus_message_get_destination(raw)),
            path: text(dbus_message_get_path(raw)).map { ObjectPath($0) }, interface: text(dbus_message_get_interface(raw)),
            member: text(dbus_message_get_member(raw)), errorName: text(dbus_message_get_error_name(raw)),
            noReplyExpected: dbus_message_get_no_reply(raw) != 0, body: MessageCoding.read(raw))
    }

    // MARK: End

    private func finish() {
        guard !finished else { return }
        finished = true
        for (_, current) in registrations { eventLoop.deregister(current.registration) }
        registrations = [:]
        if let signalSocket { eventLoop.deregister(signalSocket.registration) }
        signalSocket = nil
        if let timer { eventLoop.cancel(timer.id) }
        for call in pending.values { call.reply(.failure(.disconnected)) }
        pending.removeAll()
        for subscriber in subscribers.values { subscriber.continuation.finish() }
        subscribers.removeAll()
        for command in inbox.withLock({ queue in
            inboxClosed = true
            defer { queue.removeAll() }
            return queue
        }) {
            Self.refuse(command)
        }
        dbus_connection_close(connection)
        dbus_connection_unref(connection)
        onDisconnect()
        if ownsLoop { eventLoop.stop() }
    }
}
