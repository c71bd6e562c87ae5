import EventLoop
import Logging
import Synchronization

/// Which bus to connect to.
public enum BusAddress: Sendable, Equatable, CustomStringConvertible {
    /// `DBUS_SYSTEM_BUS_ADDRESS`, else the system bus socket: where BlueZ lives.
    case system
    /// `DBUS_SESSION_BUS_ADDRESS`.
    case session
    /// An explicit address such as `unix:path=/tmp/test-bus`; tests use their own dbus-daemon.
    case address(String)

    public var description: String {
        switch self {
        case .system: "system"
        case .session: "session"
        case .address(let address): address
        }
    }
}

/// A private connection to a D-Bus bus: method calls with timeouts, signal subscriptions as AsyncStreams,
/// and objects this process exports (`objects`).
///
/// Each connection runs on an event loop (its own, or one it is given; see `ConnectionLoop`); every method here
/// only queues work for it and never blocks. A connection lost to the bus fails pending calls with `BusError.disconnected`, finishes every
/// signal stream and finishes `disconnection`.
public final class BusConnection: Sendable {
    public let address: BusAddress
    /// Our unique name on the bus, such as `:1.42`.
    public let uniqueName: String
    /// Whether the bus lets this connection pass Unix file descriptors (AcquireNotify needs it).
    public let canPassFileDescriptors: Bool
    /// The objects this connection exports.
    public let objects: ObjectRegistry
    /// Finishes when the connection is gone, by `close()` or because the bus went away.
    public let disconnection: AsyncStream<Void>

    /// Internal for tests that hand it a signal socket of their own (`SignalSocketTests`).
    let loop: ConnectionLoop
    private let nextSubscription = Atomic<UInt64>(1)
    private let trackedOwners = Mutex<Set<String>>([])
    /// The rules whose signals come on the signal socket (`receiveOnSignalSocket`); empty while it is not open.
    private let signalSocketRules = Mutex<[MatchRule]>([])
    private let logger: Logger

    /// `loop`: the event loop to run on (the daemon's data-path loop, so StartNotify values reach their handlers
    /// without a hand-off); nil gives the connection a loop of its own.
    public init(_ address: BusAddress, logger: Logger = Logger(label: "dbus"), loop eventLoop: EventLoop? = nil) throws(BusError) {
        self.address = address
        self.logger = logger
        let registry = ObjectRegistry()
        let (disconnection, disconnected) = AsyncStream.makeStream(of: Void.self)
        self.disconnection = disconnection
        let loop = try ConnectionLoop(
            address: address, logger: logger, loop: eventLoop,
            onMethodCall: { message in registry.dispatch(message) },
            // The loop holds the registry (method calls) and the registry's sender holds the loop: detaching the
            // sender once libdbus has let go of the loop breaks that cycle, so a closed connection is freed (a
            // gateway reconnecting to a restarted bluetoothd kept every old connection; LeakSanitizer, issue 24).
            onDisconnect: {
                registry.detach()
                disconnected.finish()
            })
        self.loop = loop
        objects = registry
        uniqueName = loop.uniqueName
        canPassFileDescriptors = loop.canPassFileDescriptors
        registry.attach(send: { message in loop.send(.send(message, timeout: nil, reply: nil)) })
        loop.start(name: "dbus-\(uniqueName)")
    }

    // MARK: Calls

    /// Calls a method and returns the reply's body. Throws `BusError.remote` with the peer's error name,
    /// `.timeout` when no reply came within `timeout`, `.disconnected` when the connection went away.
    @discardableResult
    public func call(destination: String, path: ObjectPath, interface: String, member: String,
                     arguments: [DBusValue] = [], timeout: Duration = .seconds(25)) async throws(BusError) -> [DBusValue] {
        guard path.isValid else { throw .invalidArguments("\"\(path.rawValue)\" is not a valid object path") }
        for argument in arguments { try MessageCoding.validate(argument) }
        let message = OutgoingBusMessage(kind: .methodCall(destination: destination, path: path, interface: interface,
                                                           member: member), body: arguments)
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<BusMessage, BusError>, Never>) in
            loop.send(.send(message, timeout: timeout, reply: { continuation.resume(returning: $0) }))
        }
        return try result.get().body
    }

    /// Sends a method call without waiting for (or wanting) a reply.
    public func callWithoutReply(destination: String, path: ObjectPath, interface: String, member: String,
                                 arguments: [DBusValue] = []) throws(BusError) {
        guard path.isValid else { throw .invalidArguments("\"\(path.rawValue)\" is not a valid object path") }
        for argument in arguments { try MessageCoding.validate(argument) }
        loop.send(.send(OutgoingBusMessage(kind: .methodCall(destination: destination, path: path, interface: interface,
                                                             member: member), body: arguments),
                        timeout: nil, reply: nil))
    }

    /// Emits a signal from one of our objects; to everyone, or to one `destination`.
    public func emitSignal(path: ObjectPath, interface: String, member: String, arguments: [DBusValue] = [],
                           destination: String? = nil) throws(BusError) {
        for argument in arguments { try MessageCoding.validate(argument) }
        loop.send(.send(OutgoingBusMessage(kind: .signal(path: path, interface: interface, member: member,
                                                         destination: destination), body: arguments),
                        timeout: nil, reply: nil))
    }

    // MARK: Signals

    /// The signals matching `rule`, from the moment this returns (the match is active at the bus by then).
    /// Stopping the iteration (or dropping the stream) removes the match rule. The stream also ends when the
    /// connection does. Buffering is unbounded, because a dropped PropertiesChanged would leave a model stale.
    ///
    /// `intercept` sees each matching signal first, on the connection's event loop as it is dispatched; a signal it
    /// answers true for is consumed there and not put in the stream (BlueZ's notification values take this path,
    /// so they reach their handler without a hand-off).
    ///
    /// `busRules`, when given, are what is asked of the bus instead of `rule`: narrower rules, when the rest of what
    /// `rule` matches comes by the signal socket (`receiveOnSignalSocket`), which feeds the same streams.
    public func signals(_ rule: MatchRule, addingAtBus busRules: [MatchRule]? = nil,
                        intercept: (@Sendable (BusSignal) -> Bool)? = nil) async throws(BusError) -> AsyncStream<BusSignal> {
        if let sender = rule.sender, !sender.hasPrefix(":"), sender != "org.freedesktop.DBus" {
            try await trackOwner(of: sender)
        }
        let id = nextSubscription.wrappingAdd(1, ordering: .relaxed).oldValue
        let (stream, continuation) = AsyncStream.makeStream(of: BusSignal.self)
        loop.send(.subscribe(id: id, rule: rule, continuation: continuation, intercept: intercept))
        let remove = try await addMatch(busRules ?? [rule], undoing: .unsubscribe(id: id))
        continuation.onTermination = { _ in remove() }
        return stream
    }

    /// Calls `handler` with each new value of a byte-array `property` of `interface` at `path`, sent by the owner of
    /// `sender`, on the connection's loop as the signal is dispatched and read straight from the message
    /// (`PropertyValueWatches`): BlueZ's StartNotify notifications. A PropertiesChanged that changes more than this
    /// property still goes to the `signals` streams that match it. The returned closure ends the watch.
    public func watchByteArrayProperty(_ property: String, of interface: String, at path: ObjectPath, sender: String,
                                       handler: @escaping @Sendable ([UInt8]) -> Void) async throws(BusError) -> @Sendable () -> Void {
        try await trackOwner(of: sender)
        let id = nextSubscription.wrappingAdd(1, ordering: .relaxed).oldValue
        let rule = MatchRule(sender: sender, path: path, interface: "org.freedesktop.DBus.Properties",
                             member: "PropertiesChanged", arg0: interface)
        loop.send(.watchPropertyValue(.init(id: id, sender: sender, path: path, interface: interface, property: property,
                                            handler: handler)))
        // The signal socket's rules bring it already: asking the main socket too would bring each value twice.
        let onSignalSocket = signalSocketRules.withLock { rules in rules.contains { $0.covers(rule) } }
        return try await addMatch(onSignalSocket ? [] : [rule], undoing: .unwatchPropertyValue(id: id))
    }

    /// Opens a second socket to this bus that receives the signals matching `rules` from now on, read without libdbus
    /// (`SignalSocket`): property watches take their values straight from its bytes, and the rest goes to the
    /// `signals` streams that match. Use `signals(_:addingAtBus:)` so the main socket does not get them as well.
    /// Blocks while it opens (a few round trips to the bus). Throws when the bus is not on a Unix socket or refuses
    /// it; the connection then goes on as it was. Once per connection.
    public func receiveOnSignalSocket(_ rules: [MatchRule]) throws(BusError) {
        let current = signalSocketRules.withLock { $0 }
        if current == rules { return }
        let openAlready = BusError.invalidArguments("the signal socket is open already, for other rules")
        guard current.isEmpty else { throw openAlready }
        // Opened outside the lock (it blocks); a second opener racing this one loses, and its socket closes.
        let socket = try SignalSocket.open(address, rules: rules)
        let previous = signalSocketRules.withLock { current in
            defer { if current.isEmpty { current = rules } }
            return current
        }
        if previous == rules { return }
        guard previous.isEmpty else { throw openAlready }
        loop.send(.attachSignalSocket(socket, rules: rules))
        logger.debug("signals arrive on a socket of their own", metadata: ["address": "\(socket.address)"])
    }

    /// Adds `rules` at the bus for a receiver already on the loop; `undo` takes that receiver off again — at once when
    /// the bus refuses a rule, else in the returned closure, which removes the rules too.
    private func addMatch(_ rules: [MatchRule], undoing undo: ConnectionLoop.Command) async throws(BusError) -> @Sendable () -> Void {
        var added: [MatchRule] = []
        do {
            for rule in rules {
                try await callBus("AddMatch", [.string(rule.description)])
                added.append(rule)
            }
        } catch {
            loop.send(undo)
            Self.removeMatches(added, on: loop)
            throw error
        }
        let loop = loop, rules = added
        return {
            loop.send(undo)
            Self.removeMatches(rules, on: loop)
        }
    }

    private static func removeMatches(_ rules: [MatchRule], on loop: ConnectionLoop) {
        for rule in rules {
            loop.send(.send(OutgoingBusMessage(
                kind: .methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                  interface: "org.freedesktop.DBus", member: "RemoveMatch"),
                body: [.string(rule.description)]), timeout: nil, reply: nil))
        }
    }

    /// Signals carry the sender's unique name; to match a rule that names a well-known name, the loop keeps
    /// that name's current owner, fed by NameOwnerChanged.
    private func trackOwner(of name: String) async throws(BusError) {
        let isNew = trackedOwners.withLock { $0.insert(name).inserted }
        guard isNew else { return }
        loop.send(.trackOwner(name: name))
        try await callBus("AddMatch", [.string(MatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
                                                         member: "NameOwnerChanged", arg0: name).description)])
        let owner = try? await nameOwner(name)
        loop.send(.initialOwner(name: name, owner: owner ?? ""))
    }

    // MARK: The bus daemon

    /// The unique name that owns `name` now, or nil when nobody does.
    public func nameOwner(_ name: String) async throws(BusError) -> String? {
        do {
            return try await callBus("GetNameOwner", [.string(name)]).first?.stringValue
        } catch .remote(let errorName, _) where errorName == "org.freedesktop.DBus.Error.NameHasNoOwner" {
            return nil
        }
    }

    public enum NameRequestReply: UInt32, Sendable {
        case primaryOwner = 1, inQueue = 2, exists = 3, alreadyOwner = 4
    }

    /// Asks the bus for a well-known name, such as `org.bluez` for the simulator.
    public func requestName(_ name: String, replaceExisting: Bool = false, doNotQueue: Bool = true) async throws(BusError) -> NameRequestReply {
        var flags: UInt32 = 0
        if replaceExisting { flags |= 0x2 }
        if doNotQueue { flags |= 0x4 }
        let reply = try await callBus("RequestName", [.string(name), .uint32(flags)])
        guard let code = reply.first?.integerValue, let result = NameRequestReply(rawValue: UInt32(code)) else {
            throw .unexpectedReply("RequestName answered \(reply)")
        }
        return result
    }

    @discardableResult
    private func callBus(_ member: String, _ arguments: [DBusValue]) async throws(BusError) -> [DBusValue] {
        try await call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                       interface: "org.freedesktop.DBus", member: member, arguments: arguments)
    }

    // MARK: End

    /// Closes the connection: pending calls fail with `.disconnected`, signal streams finish.
    public func close() {
        loop.send(.close)
    }
}
