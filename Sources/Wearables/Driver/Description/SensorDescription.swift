/// One sensor stream a driver's devices may publish on `sensor/<kind>`.
public struct SensorDescription: Sendable, Equatable {
    /// When a device sends it.
    public enum Presence: Sendable, Equatable {
        /// From the moment it connects.
        case always
        /// When its GATT table has this service (16-bit, `180d`): the standard profiles stream each one found.
        case whenService(String)
        /// Once `configure` starts it.
        case whenConfigured
    }

    public var kind: SensorKind
    /// The unit of its values (`g`, `m/s²`, `µV`), nil when the fields carry their own (`bpm`, `percent`).
    public var unit: String?
    /// The rates it runs at, in Hz (nominal; the first is the default), empty when it follows the device's events
    /// (a heart-rate strap's one measurement a beat).
    public var ratesHz: [Double]
    public var presence: Presence

    public init(_ kind: SensorKind, unit: String? = nil, ratesHz: [Double] = [], _ presence: Presence = .always) {
        self.kind = kind
        self.unit = unit
        self.ratesHz = ratesHz
        self.presence = presence
    }
}
