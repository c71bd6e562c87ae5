import Wearables

/// The retained `<base>/<id>` state of one device, kept as a value: drivers' state patches and progress are
/// merged in, the gateway sets the link fields, and `json` renders it with sorted keys.
///
/// Merging follows JSON Merge Patch (RFC 7396): objects merge key by key at every depth (a patch
/// `{"sensors":{"eda":{…}}}` leaves the other sensors alone), any other value replaces, and `null` removes
/// the key. `connection` and `last_seen` belong to the gateway: patches from a driver cannot change them.
///
/// It does not decide when to publish: every mutation says whether the document changed, and the caller
/// publishes (and may throttle `last_seen`, which changes with every message).
public struct DeviceStateDocument: Sendable, Equatable {
    /// Keys only the gateway sets.
    public static let gatewayKeys: Set<String> = ["connection", "last_seen", "link"]

    public private(set) var fields: [String: DeviceValue]

    /// A device the gateway has not reached yet: `{"connection":"disconnected"}`.
    public init(connection: String = "disconnected") {
        fields = ["connection": .text(connection)]
    }

    /// A document as it was kept (`DeviceStateArchive`).
    public init(fields: [String: DeviceValue]) {
        self.fields = fields
    }

    /// Folds a driver's event into the state; only `.state` and `.progress` touch it.
    /// - Returns: whether the document changed.
    @discardableResult
    public mutating func apply(_ event: WearableEvent) -> Bool {
        switch event {
        case .state(let patch): merge(patch)
        case .progress(let key, let progress): setProgress(progress, key: key)
        case .sample, .gesture, .event, .record: false
        }
    }

    /// Merges a driver's patch; see the type's rules.
    @discardableResult
    public mutating func merge(_ patch: [String: DeviceValue]) -> Bool {
        let before = fields
        for (key, value) in patch where !Self.gatewayKeys.contains(key) {
            fields[key] = Self.merged(fields[key], value)
        }
        return fields != before
    }

    /// `sync` or `update`: `{"state":…,"progress":…,"remaining_s":…,"last_ts":…}`, the absent parts left out.
    /// `last_ts` survives a progress report without one, so the time of the last synced record stays visible
    /// after the sync goes back to idle.
    @discardableResult
    public mutating func setProgress(_ progress: OperationProgress, key: String) -> Bool {
        guard !Self.gatewayKeys.contains(key) else { return false }
        var object: [String: DeviceValue] = ["state": .text(progress.state)]
        if let percent = progress.percent { object["progress"] = .number(percent) }
        if let remaining = progress.remainingSeconds { object["remaining_s"] = .number(remaining) }
        if let last = progress.lastTimestamp {
            object["last_ts"] = .integer(last)
        } else if let previous = fields[key]?["last_ts"] {
            object["last_ts"] = previous
        }
        return set(key, .object(object))
    }

    /// `connected`, `connecting`, `disconnecting` or `disconnected`.
    @discardableResult
    public mutating func setConnection(_ connection: String) -> Bool { set("connection", .text(connection)) }

    /// How the link is held on demand; nil removes it.
    public mutating func setLink(_ link: DeviceValue?) -> Bool { set("link", link) }

    /// What `<id>/availability` says: connected, or let go on purpose after a visit that reached it (a link on demand,
    /// `link.state` `idle`), when its values still hold and a command brings the link back.
    public var isAvailable: Bool {
        fields["connection"]?.text == "connected" || fields["link"]?["state"]?.text == "idle"
    }

    /// Unix milliseconds of the last message from the device.
    @discardableResult
    public mutating func setLastSeen(_ timestamp: Int64) -> Bool { set("last_seen", .integer(timestamp)) }

    /// Signal strength in dBm; `nil` removes it.
    @discardableResult
    public mutating func setRSSI(_ rssi: Int?) -> Bool { set("rssi", rssi.map { .integer(Int64($0)) }) }

    /// The payload of `<base>/<id>`.
    public var json: [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.value(.object(fields))
        return writer.bytes
    }

    private mutating func set(_ key: String, _ value: DeviceValue?) -> Bool {
        guard fields[key] != value else { return false }
        fields[key] = value
        return true
    }

    private static func merged(_ target: DeviceValue?, _ patch: DeviceValue) -> DeviceValue? {
        // Spelled out: `DeviceValue` is `ExpressibleByNilLiteral`, so a bare `nil` here could become `.null`.
        guard case .object(let members) = patch else { return patch == .null ? Optional<DeviceValue>.none : patch }
        var result = target?.object ?? [:]
        for (key, value) in members {
            result[key] = merged(result[key], value)
        }
        return .object(result)
    }
}
