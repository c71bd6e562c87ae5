import Wearables

/// The rules for device ids, the topic segment `<id>` of every device topic.
///
/// The same rules for `device/add`, `device/rename` and config.yaml's `devices[].name`, so a name accepted over
/// MQTT is accepted at the next start and the other way round: 1 to 64 bytes of `[A-Za-z0-9_-]` (no wildcard,
/// `/`, `.`, space, control or formatting character can reach a topic level), and none of the ``reserved`` words
/// in any case.
public enum DeviceIdentifier {
    /// A topic level stays readable, and a 17-character address fits with room for a driver name.
    public static let maxLength = 64

    /// Lower case; compared case-insensitively. `bridge` is the gateway's own level under the base; the others
    /// are the levels that route a request (`<base>/<id>/request/…`, `/set`, `/get`) and its answer, so no request
    /// topic reads two ways (`<base>/set/set`); a case variant such as `Bridge` would pass for the gateway's own
    /// on a case-insensitive screen or ACL.
    public static let reserved: Set<String> = ["bridge", "request", "response", "set", "get"]

    /// `DEVICE_NOT_FOUND` for an id from a request, quoted as every echo of a client's text is (cut at 40
    /// characters, invisible and bidirectional characters escaped).
    public static func notFound(_ id: String) -> CommandError {
        CommandError(.deviceNotFound, "no device with id \(RequestReader.quote(id))")
    }

    /// Whether two ids name the same device: ids are compared without regard to case everywhere (lookups,
    /// uniqueness, reserved words), so `n1` and `N1` can never be two devices.
    public static func same(_ first: String, _ second: String) -> Bool {
        first == second || first.lowercased() == second.lowercased()
    }

    /// Passes ``problem(_:)``.
    public static func isValid(_ id: String) -> Bool { problem(id) == nil }

    /// Why `id` cannot be a device id, or `nil`; the sentence reads after the field's name ("name …").
    public static func problem(_ id: String) -> String? {
        if let problem = ConfigurationRules.segmentProblem(id, maxLength: maxLength) { return problem }
        if reserved.contains(id.lowercased()) {
            return "\"\(id)\" is reserved for the gateway's own topics (\(reserved.sorted().joined(separator: ", ")), in any case)"
        }
        return nil
    }

    /// Checks a name a user chose (`device/add`, `device/rename`); `field` names it in the error.
    public static func validate(_ name: String, field: String = "name") throws(CommandError) {
        if let problem = problem(name) { throw CommandError(.invalidValue, "\(field) \(problem)") }
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
