/// A structured value in the device model: settings, command arguments and results, state fields.
///
/// It has JSON's shape so the gateway can map it one to one, but it is not JSON: drivers never see text,
/// and the gateway alone decides how it is written on MQTT.
///
/// Not `indirect`: lists and objects already keep their elements in heap buffers, and a boxed case would cost an
/// allocation per value and store the box's address with the case's tag in its spare bits, which LeakSanitizer
/// cannot follow (docs/reliability.md, Sanitizers).
public enum DeviceValue: Sendable, Equatable, Hashable {
    case null
    case flag(Bool)
    case integer(Int64)
    case number(Double)
    case text(String)
    case list([DeviceValue])
    case object([String: DeviceValue])

    public var integer: Int64? {
        switch self {
        case .integer(let value): value
        case .number(let value) where value.rounded() == value && abs(value) < 9e15: Int64(value)
        default: nil
        }
    }

    public var number: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .number(let value): value
        default: nil
        }
    }

    public var text: String? { if case .text(let value) = self { value } else { nil } }
    public var flag: Bool? { if case .flag(let value) = self { value } else { nil } }
    public var list: [DeviceValue]? { if case .list(let value) = self { value } else { nil } }
    public var object: [String: DeviceValue]? { if case .object(let value) = self { value } else { nil } }

    public subscript(key: String) -> DeviceValue? { object?[key] }
}

extension DeviceValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .text(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .flag(value) }
    public init(arrayLiteral elements: DeviceValue...) { self = .list(elements) }
    public init(dictionaryLiteral elements: (String, DeviceValue)...) {
        self = .object(Dictionary(elements) { $1 })
    }
    public init(nilLiteral: ()) { self = .null }
}

extension DeviceValue: Codable {
    /// Any JSON- or YAML-shaped value: `devices[].configure` in config.yaml and the device list on disk keep
    /// command payloads this way. Integers stay integers; a number with a fraction is a double.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let flag = try? container.decode(Bool.self) { self = .flag(flag) }
        else if let integer = try? container.decode(Int64.self) { self = .integer(integer) }
        else if let number = try? container.decode(Double.self) { self = .number(number) }
        else if let text = try? container.decode(String.self) { self = .text(text) }
        else if let list = try? container.decode([DeviceValue].self) { self = .list(list) }
        else { self = .object(try container.decode([String: DeviceValue].self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .flag(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .text(let value): try container.encode(value)
        case .list(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
