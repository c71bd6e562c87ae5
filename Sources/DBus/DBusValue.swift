#if canImport(Glibc)
import Glibc
#endif

/// A D-Bus object path such as `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`.
public struct ObjectPath: Sendable, Hashable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }

    /// D-Bus syntax: `/`, or `/`-separated non-empty elements of `[A-Za-z0-9_]`, no trailing slash.
    public var isValid: Bool {
        if rawValue == "/" { return true }
        guard rawValue.hasPrefix("/"), !rawValue.hasSuffix("/") else { return false }
        return rawValue.dropFirst().split(separator: "/", omittingEmptySubsequences: false).allSatisfy { element in
            !element.isEmpty && element.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
            }
        }
    }

    /// Whether `self` is `ancestor` or lies below it.
    public func isDescendant(of ancestor: ObjectPath) -> Bool {
        ancestor.rawValue == "/" || rawValue == ancestor.rawValue || rawValue.hasPrefix(ancestor.rawValue + "/")
    }

    public func appending(_ element: String) -> ObjectPath {
        ObjectPath(rawValue == "/" ? "/" + element : rawValue + "/" + element)
    }

    public var parent: ObjectPath? {
        guard rawValue != "/", let slash = rawValue.lastIndex(of: "/") else { return nil }
        return slash == rawValue.startIndex ? ObjectPath("/") : ObjectPath(String(rawValue[..<slash]))
    }

    public static func < (lhs: ObjectPath, rhs: ObjectPath) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A Unix file descriptor received or sent over D-Bus (type `h`). Owns the descriptor and closes it when the
/// last reference goes; `duplicate()` hands out one the caller owns.
public final class UnixFileDescriptor: Sendable, Equatable, CustomStringConvertible {
    public let rawValue: Int32

    /// Takes ownership of `rawValue`.
    public init(owning rawValue: Int32) { self.rawValue = rawValue }

    deinit { if rawValue >= 0 { close(rawValue) } }

    /// A new descriptor for the same open file; the caller must close it.
    public func duplicate() -> Int32 { dup(rawValue) }

    public static func == (lhs: UnixFileDescriptor, rhs: UnixFileDescriptor) -> Bool { lhs === rhs }
    public var description: String { "fd(\(rawValue))" }
}

/// One D-Bus value of any type.
///
/// `bytes` is `ay` kept as a byte array, because GATT values travel as `ay` at high rates and a value per
/// byte would cost an allocation each. Arrays and dictionaries carry their element signatures so that empty
/// ones still know their type. Only `variant` is boxed (`indirect`): arrays and dictionaries keep their elements in
/// heap buffers already, and boxing every case cost an allocation per value and stored the box's address with the
/// case's tag in its spare bits, which LeakSanitizer cannot follow (docs/reliability.md, Sanitizers).
public enum DBusValue: Sendable, Equatable, CustomStringConvertible {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(ObjectPath)
    case signature(String)
    case unixFD(UnixFileDescriptor)
    case bytes([UInt8])
    case array(elementSignature: String, [DBusValue])
    case dictionary(keySignature: String, valueSignature: String, [DictionaryEntry])
    case structure([DBusValue])
    indirect case variant(DBusValue)

    public struct DictionaryEntry: Sendable, Equatable {
        public var key: DBusValue
        public var value: DBusValue
        public init(_ key: DBusValue, _ value: DBusValue) {
            self.key = key
            self.value = value
        }
    }

    /// The D-Bus type signature of this value.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .bytes: "ay"
        case .array(let element, _): "a" + element
        case .dictionary(let key, let value, _): "a{" + key + value + "}"
        case .structure(let items): "(" + items.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    public var description: String {
        switch self {
        case .byte(let v): "\(v)"
        case .boolean(let v): "\(v)"
        case .int16(let v): "\(v)"
        case .uint16(let v): "\(v)"
        case .int32(let v): "\(v)"
        case .uint32(let v): "\(v)"
        case .int64(let v): "\(v)"
        case .uint64(let v): "\(v)"
        case .double(let v): "\(v)"
        case .string(let v): "\"\(v)\""
        case .objectPath(let v): v.rawValue
        case .signature(let v): "<\(v)>"
        case .unixFD(let v): v.description
        case .bytes(let v): "[" + v.map { String(format2: $0) }.joined(separator: " ") + "]"
        case .array(_, let items): "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(_, _, let entries):
            "{" + entries.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .structure(let items): "(" + items.map(\.description).joined(separator: ", ") + ")"
        case .variant(let inner): "<\(inner)>"
        }
    }
}

private extension String {
    init(format2 byte: UInt8) {
        let digits = Array("0123456789abcdef")
        self = String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}

// MARK: Building values

extension DBusValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .boolean(value) }

    /// `a{sv}`, the shape of every property set and option dictionary; entries sorted by key so the
    /// encoding is stable.
    public static func stringVariantDictionary(_ values: [String: DBusValue]) -> DBusValue {
        .dictionary(keySignature: "s", valueSignature: "v",
                    values.sorted { $0.key < $1.key }.map { DictionaryEntry(.string($0.key), .variant($0.value)) })
    }

    /// `as`.
    public static func strings(_ values: [String]) -> DBusValue {
        .array(elementSignature: "s", values.map(DBusValue.string))
    }

    /// `ao`.
    public static func objectPaths(_ values: [ObjectPath]) -> DBusValue {
        .array(elementSignature: "o", values.map(DBusValue.objectPath))
    }
}

// MARK: Reading values

extension DBusValue {
    /// The value inside any number of variant wrappers.
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    public var stringValue: String? {
        switch unwrapped {
        case .string(let v): v
        case .objectPath(let v): v.rawValue
        case .signature(let v): v
        default: nil
        }
    }

    public var boolValue: Bool? { if case .boolean(let v) = unwrapped { v } else { nil } }
    public var objectPathValue: ObjectPath? { if case .objectPath(let v) = unwrapped { v } else { nil } }
    public var unixFDValue: UnixFileDescriptor? { if case .unixFD(let v) = unwrapped { v } else { nil } }

    /// Any integer type, widened; nil for other types.
    public var integerValue: Int64? {
        switch unwrapped {
        case .byte(let v): Int64(v)
        case .int16(let v): Int64(v)
        case .uint16(let v): Int64(v)
        case .int32(let v): Int64(v)
        case .uint32(let v): Int64(v)
        case .int64(let v): v
        case .uint64(let v): Int64(exactly: v)
        default: nil
        }
    }

    public var doubleValue: Double? { if case .double(let v) = unwrapped { v } else { integerValue.map(Double.init) } }

    /// `ay` in either representation.
    public var bytesValue: [UInt8]? {
        switch unwrapped {
        case .bytes(let v): v
        case .array("y", let items):
            items.compactMap { if case .byte(let b) = $0 { b } else { nil } }
        default: nil
        }
    }

    public var arrayValues: [DBusValue]? {
        switch unwrapped {
        case .array(_, let items): items
        case .bytes(let bytes): bytes.map(DBusValue.byte)
        default: nil
        }
    }

    public var stringArrayValue: [String]? { arrayValues?.compactMap(\.stringValue) }

    public var dictionaryEntries: [DictionaryEntry]? {
        if case .dictionary(_, _, let entries) = unwrapped { entries } else { nil }
    }

    /// `a{sv}` (or any string-keyed dictionary) with variants unwrapped.
    public var stringKeyedDictionary: [String: DBusValue]? {
        guard let entries = dictionaryEntries else { return nil }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            guard let key = entry.key.stringValue else { return nil }
            result[key] = entry.value.unwrapped
        }
        return result
    }

    /// `a{qv}`, as in BlueZ's ManufacturerData: integer keys, variants unwrapped.
    public var integerKeyedDictionary: [Int64: DBusValue]? {
        guard let entries = dictionaryEntries else { return nil }
        var result: [Int64: DBusValue] = [:]
        for entry in entries {
            guard let key = entry.key.integerValue else { return nil }
            result[key] = entry.value.unwrapped
        }
        return result
    }

    public var structureValues: [DBusValue]? { if case .structure(let items) = unwrapped { items } else { nil } }
}
