import Wearables

/// Every topic of the MQTT contract under one base topic, and the reverse: which request an incoming topic
/// names.
///
/// It builds strings and nothing else: it does not check that a device exists or that an id is valid (ids
/// are validated where they are chosen, see ``DeviceIdentifier``).
public struct TopicLayout: Sendable, Equatable {
    /// `mqtt.base_topic`, without a trailing `/`.
    public let base: String

    public init(base: String) { self.base = base }

    // MARK: Bridge

    public var bridgeState: String { "\(base)/bridge/state" }
    public var bridgeInfo: String { "\(base)/bridge/info" }
    public var bridgeDevices: String { "\(base)/bridge/devices" }
    /// Every registered driver's description (`wear2mqtt drivers`), retained: what a found device may be.
    public var bridgeDrivers: String { "\(base)/bridge/drivers" }
    public var bridgeEvent: String { "\(base)/bridge/event" }
    public var bridgeHealth: String { "\(base)/bridge/health" }
    /// Warnings and errors of the gateway as JSON, rate-limited (zigbee2mqtt's `bridge/logging`).
    public var bridgeLogging: String { "\(base)/bridge/logging" }

    /// `<base>/bridge/request/<name>`; names may contain `/` (`device/pair/confirm`).
    public func bridgeRequest(_ name: String) -> String { "\(base)/bridge/request/\(name)" }
    public func bridgeResponse(_ name: String) -> String { "\(base)/bridge/response/\(name)" }

    // MARK: Devices

    /// The retained device state.
    public func device(_ id: String) -> String { "\(base)/\(id)" }
    public func availability(_ id: String) -> String { "\(base)/\(id)/availability" }
    public func sensor(_ id: String, _ sensor: SensorKind) -> String { "\(base)/\(id)/sensor/\(sensor.rawValue)" }
    public func gesture(_ id: String) -> String { "\(base)/\(id)/gesture" }
    public func event(_ id: String) -> String { "\(base)/\(id)/event" }
    /// `kind` ∈ steps, sleep, heart_rate, spo2, activity, epoch.
    public func fitness(_ id: String, kind: String) -> String { "\(base)/\(id)/fitness/\(kind)" }
    public func deviceRequest(_ id: String, command: String) -> String { "\(base)/\(id)/request/\(command)" }
    public func deviceResponse(_ id: String, command: String) -> String { "\(base)/\(id)/response/\(command)" }
    /// Accepted as `request/settings` (zigbee2mqtt habit).
    public func deviceSet(_ id: String) -> String { "\(base)/\(id)/set" }
    /// Accepted as `request/refresh`.
    public func deviceGet(_ id: String) -> String { "\(base)/\(id)/get" }

    /// The filters that receive every request of the contract, each exactly once: `+` covers `bridge` too,
    /// and overlapping filters would make the broker deliver (and the gateway execute) a request twice.
    public var requestSubscriptions: [String] {
        ["\(base)/+/request/#", "\(base)/+/set", "\(base)/+/get"]
    }

    // MARK: Incoming

    /// Which request a topic names.
    ///
    /// `<base>/<id>/set` and `/get` come back as the `settings` and `refresh` commands, so their responses go
    /// to `response/settings` and `response/refresh`. The device id is returned as written, not validated: an
    /// id that names no device is answered with `DEVICE_NOT_FOUND` by the caller, an empty or malformed one with
    /// `invalid_request`. Everything else under the base (our own publications, `<base>/bridge/set`) is
    /// `.notOurs` and ignored.
    public func classify(_ topic: String) -> IncomingTopic {
        let prefix = base + "/"
        guard topic.hasPrefix(prefix) else { return .notOurs }
        let levels = topic.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        // An empty id level (`<base>//request/refresh`, `<base>//set`) is still a request, refused as one
        // (`RequestTopicRule`): the asker gets `invalid_request` instead of silence.
        guard let first = levels.first else { return .notOurs }
        let isRequest = levels.count >= 3 && levels[1] == "request"
        let name = isRequest ? levels[2...].joined(separator: "/") : ""
        if first == "bridge" {
            return isRequest ? .bridgeRequest(name: name) : .notOurs
        }
        if isRequest { return .deviceRequest(device: String(first), command: name) }
        guard levels.count == 2 else { return .notOurs }
        switch levels[1] {
        case "set": return .deviceRequest(device: String(first), command: "settings")
        case "get": return .deviceRequest(device: String(first), command: "refresh")
        default: return .notOurs
        }
    }
}

/// What an incoming topic asks for.
public enum IncomingTopic: Sendable, Equatable {
    /// `<base>/bridge/request/<name>`.
    case bridgeRequest(name: String)
    /// `<base>/<id>/request/<command>`, `<base>/<id>/set` (settings) or `<base>/<id>/get` (refresh).
    case deviceRequest(device: String, command: String)
    /// Not a request of the contract; ignore it.
    case notOurs
}
