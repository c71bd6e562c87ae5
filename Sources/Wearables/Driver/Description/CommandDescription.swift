/// One command a driver accepts: what it takes, whether `allow` guards it, and whether it runs long.
public struct CommandDescription: Sendable, Equatable {
    /// Which layer runs it: the gateway (a firmware update, which outlives the connection it starts on), the
    /// device's session (which owns the link), or the driver over the link.
    public enum Route: String, Sendable {
        case gateway, session, driver
        /// Run by the driver, but only as a step of `bridge/request/device/pair` (never a device request of its own).
        case pairing
    }

    /// How long it takes. A long one (a history download, a firmware update) is served apart from quick requests
    /// and watched by the device's progress rather than the gateway's command timeout.
    public enum Duration: Sendable, Equatable {
        case quick
        case long
        /// Long when `field` is present and, if `values` is given, one of them (an ActiGraph `configure` with an
        /// `epoch` section; a Polar `recording` that fetches or lists).
        case longWhen(field: String, values: [String]? = nil)

        public func isLong(_ arguments: [String: DeviceValue]) -> Bool {
            switch self {
            case .quick: return false
            case .long: return true
            case .longWhen(let field, let values):
                guard let value = arguments[field] else { return false }
                guard let values else { return true }
                return values.contains { value == .text($0) }
            }
        }
    }

    /// The `allow` key that must be true for it to run (a destructive command).
    public enum Guard: String, Sendable {
        case clearData = "clear_data", factoryReset = "factory_reset", dfu
    }

    public var name: String
    public var summary: String
    public var arguments: [ArgumentDescription]
    /// Whether fields beyond `arguments` may be sent (objects the driver reads as a whole: `settings`, `configure`).
    public var acceptsOtherFields: Bool
    public var allow: Guard?
    public var duration: Duration
    /// Whether it reports progress while it runs (in the device's state: `sync.progress`, `dfu.progress`).
    public var reportsProgress: Bool
    public var route: Route

    public init(_ name: String, _ summary: String, arguments: [ArgumentDescription] = [], acceptsOtherFields: Bool = false,
                allow: Guard? = nil, duration: Duration = .quick, reportsProgress: Bool = false, route: Route = .driver) {
        self.name = name
        self.summary = summary
        self.arguments = arguments
        self.acceptsOtherFields = acceptsOtherFields
        self.allow = allow
        self.duration = duration
        self.reportsProgress = reportsProgress
        self.route = route
    }
}

/// One field of a command's request object.
public struct ArgumentDescription: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case integer(ClosedRange<Int64>?)
        case number(ClosedRange<Double>?)
        case text
        case choice([String])
        case flag
        /// Unix time in milliseconds.
        case timestamp
        /// An object the driver reads field by field (described in `summary`).
        case object
        case list
    }

    public var name: String
    public var kind: Kind
    public var required: Bool
    public var summary: String

    public init(_ name: String, _ kind: Kind, required: Bool = false, _ summary: String) {
        self.name = name
        self.kind = kind
        self.required = required
        self.summary = summary
    }
}
