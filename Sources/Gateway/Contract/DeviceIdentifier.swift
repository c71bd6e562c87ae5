import Wearables

/// The rules for device ids, the topic segment `<id>` of every device topic.
///
/// The same rules as the configuration file's (``ConfigurationRules``), so a name accepted over MQTT is
/// accepted at the next start and the other way round.
public enum DeviceIdentifier {
    /// Ids that would collide with the gateway's own topics.
    public static let reserved: Set<String> = ["bridge"]

    /// `[A-Za-z0-9_-]+` and not reserved.
    public static func isValid(_ id: String) -> Bool {
        ConfigurationRules.isTopicSegment(id) && !reserved.contains(id)
    }

    /// Checks a name a user chose (`device/add`, `device/rename`); `field` names it in the error.
    public static func validate(_ name: String, field: String = "name") throws(CommandError) {
        if reserved.contains(name) {
            throw CommandError(.invalidValue, "\(field) \"\(name)\" is reserved for the gateway's own topics")
        }
        if let problem = ConfigurationRules.segmentProblem(name) {
            throw CommandError(.invalidValue, "\(field) \(problem)")
        }
    }

    /// The id of a device without a friendly name: `<driver>_<address without colons, lower case>`, e.g.
    /// `heart_rate_a4c138f00b1e`. Characters a topic segment cannot hold become `_`, so the result is always
    /// a valid id.
    public static func defaultID(driver: String, address: String) -> String {
        let compactAddress = address.lowercased().filter { $0 != ":" && $0 != "-" }
        let sanitizedDriver = String(decoding: driver.utf8.map { isSegmentByte($0) ? $0 : UInt8(ascii: "_") }, as: UTF8.self)
        return "\(sanitizedDriver.isEmpty ? "device" : sanitizedDriver)_\(compactAddress)"
    }

    private static func isSegmentByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }

    /// `AA:BB:CC:DD:EE:FF` in either case, returned upper case as BlueZ writes it; `nil` when malformed.
    public static func normalizedAddress(_ text: String) -> String? {
        ConfigurationRules.normalisedBluetoothAddress(text)
    }
}
