/// The one reader of request objects, for the gateway's requests and every driver's: typed fields with the
/// contract's `INVALID_VALUE` sentences — the field is named with its whole path (`filter.rssi`,
/// `settings.alarms[1].time`), the accepted values are said, and what was received is quoted.
///
/// Absent fields read as `nil`; `null` is not absent but a wrong type, so a mistake never silently becomes a
/// default. Rules only a driver knows (which periods a Bose sensor offers) stay with the driver, which names
/// the field with `name(_:)` so every message has the same paths.
public struct RequestReader: Sendable {
    public let arguments: [String: DeviceValue]
    /// `filter.` for fields nested in `filter`, so messages name the full path.
    public let path: String

    public init(_ arguments: [String: DeviceValue], path: String = "") {
        self.arguments = arguments
        self.path = path
    }

    /// The field's name with its path.
    public func name(_ key: String) -> String { path + key }

    /// A reader of the object at `key` (nil when absent), its fields named under `key.`.
    public func nested(_ key: String) throws(CommandError) -> RequestReader? {
        try object(key).map { RequestReader($0, path: name(key) + ".") }
    }

    /// Readers of the objects in the list at `key` (nil when absent), named `key[0].`, `key[1].`, ….
    public func nestedList(_ key: String) throws(CommandError) -> [RequestReader]? {
        guard let list = try list(key) else { return nil }
        var readers: [RequestReader] = []
        for (index, element) in list.enumerated() {
            guard let object = element.object else {
                throw CommandError(.invalidValue, "\(name(key))[\(index)] must be a JSON object, got \(Self.quote(element))")
            }
            readers.append(RequestReader(object, path: "\(name(key))[\(index)]."))
        }
        return readers
    }

    public func integer(_ key: String, in range: ClosedRange<Int64>, unit: String = "") throws(CommandError) -> Int64? {
        guard let value = arguments[key] else { return nil }
        guard let integer = value.integer, range.contains(integer) else {
            throw invalid(key, "must be an integer from \(range.lowerBound) to \(range.upperBound)\(unit)", got: value)
        }
        return integer
    }

    /// An integer with no upper bound other than Int64's, e.g. a Unix time.
    public func integer(_ key: String, atLeast minimum: Int64, meaning: String) throws(CommandError) -> Int64? {
        guard let value = arguments[key] else { return nil }
        guard let integer = value.integer, integer >= minimum else { throw invalid(key, "must be \(meaning)", got: value) }
        return integer
    }

    public func string(_ key: String) throws(CommandError) -> String? {
        guard let value = arguments[key] else { return nil }
        guard let text = value.text else { throw invalid(key, "must be a string", got: value) }
        return text
    }

    public func nonEmptyString(_ key: String) throws(CommandError) -> String? {
        guard let value = arguments[key] else { return nil }
        guard let text = value.text, !text.isEmpty else { throw invalid(key, "must be a non-empty string", got: value) }
        return text
    }

    public func bool(_ key: String) throws(CommandError) -> Bool? {
        guard let value = arguments[key] else { return nil }
        guard let flag = value.flag else { throw invalid(key, "must be true or false", got: value) }
        return flag
    }

    public func choice(_ key: String, from choices: [String]) throws(CommandError) -> String? {
        guard let value = arguments[key] else { return nil }
        guard let text = value.text, choices.contains(text) else {
            throw invalid(key, "must be one of \(Self.list(choices.map { "\"\($0)\"" }, conjunction: "or"))", got: value)
        }
        return text
    }

    public func object(_ key: String) throws(CommandError) -> [String: DeviceValue]? {
        guard let value = arguments[key] else { return nil }
        guard let object = value.object else { throw invalid(key, "must be a JSON object", got: value) }
        return object
    }

    public func list(_ key: String) throws(CommandError) -> [DeviceValue]? {
        guard let value = arguments[key] else { return nil }
        guard let list = value.list else { throw invalid(key, "must be an array", got: value) }
        return list
    }

    public func required<Value>(_ value: Value?, _ key: String, _ what: String) throws(CommandError) -> Value {
        guard let value else { throw CommandError(.invalidValue, "\(name(key)) is required: \(what)") }
        return value
    }

    /// Refuses fields the request does not know, so a typo (`"vibration":3`) is an error instead of a
    /// silently ignored field.
    public func rejectUnknownFields(allowed: [String], request: String) throws(CommandError) {
        let unknown = arguments.keys.filter { !allowed.contains($0) }.sorted()
        guard !unknown.isEmpty else { return }
        let names = Self.list(unknown.map { Self.quote(name($0)) }, conjunction: "and")
        let field = unknown.count == 1 ? "field" : "fields"
        if allowed.isEmpty {
            throw CommandError(.invalidValue, "\(request) takes no fields, got unknown \(field) \(names)")
        }
        let accepted = Self.list(allowed.map { name($0) }, conjunction: "and")
        throw CommandError(.invalidValue, "unknown \(field) \(names) for \(request), which accepts \(accepted)")
    }

    public func invalid(_ key: String, _ rule: String, got value: DeviceValue) -> CommandError {
        CommandError(.invalidValue, "\(name(key)) \(rule), got \(Self.quote(value))")
    }

    /// The received value as compact JSON, cut at 40 characters (37 and `...`) so an error never echoes a whole
    /// payload, and with every control, format (bidirectional overrides, zero-width joiners) and line or paragraph
    /// separator character written as `\uXXXX`, so a quote can neither reorder nor break the line that shows it.
    /// Cut by Unicode scalars, not characters: one character can hold thousands of combining marks.
    public static func quote(_ value: DeviceValue) -> String {
        let scalars = String(decoding: JSONWriter.encode(value), as: UTF8.self).unicodeScalars
        var quoted = ""
        for scalar in scalars.count <= 40 ? Array(scalars) : Array(scalars.prefix(37)) + Array("...".unicodeScalars) {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                quoted += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            default:
                quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted
    }

    /// A string from a client (a device id, a field name), quoted as ``quote(_:)`` quotes values: `"n1"`.
    public static func quote(_ text: String) -> String { quote(.text(text)) }

    /// `a`, `a or b`, `a, b or c`.
    public static func list(_ items: [String], conjunction: String) -> String {
        guard items.count > 1 else { return items.first ?? "" }
        return items.dropLast().joined(separator: ", ") + " \(conjunction) " + items.last!
    }

    public static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"):
            true
        default:
            false
        }
    }
}
