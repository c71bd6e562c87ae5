import Wearables

/// One entity (or device trigger) of a Home Assistant device-based discovery document: the `cmps` entry under
/// `key`, with its platform (`p`) and its options in Home Assistant's own names.
///
/// `key` is stable for the life of the capability (`heart_rate`, `find`): it makes the entity's `unique_id`, so
/// Home Assistant keeps the entity's history and the user's changes to it across renames and restarts.
public struct DiscoveryComponent: Sendable, Equatable {
    public var key: String
    public var platform: String
    public var options: [String: DeviceValue]

    public init(_ key: String, platform: String, _ options: [String: DeviceValue]) {
        self.key = key
        self.platform = platform
        self.options = options
    }

    /// `entity_category: diagnostic`: shown apart from the device's controls and sensors.
    public func diagnostic() -> DiscoveryComponent {
        var copy = self
        copy.options["entity_category"] = "diagnostic"
        return copy
    }

    /// Created but disabled until the user enables it (RSSI: noisy, rarely wanted).
    public func disabledByDefault() -> DiscoveryComponent {
        var copy = self
        copy.options["enabled_by_default"] = false
        return copy
    }
}
