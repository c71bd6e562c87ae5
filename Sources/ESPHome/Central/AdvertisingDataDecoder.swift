/// What a raw advertisement says, decoded from its AD structures (Bluetooth Core Specification Supplement, Part A):
/// the fields BlueZ would have put on its Device1 object, so a proxy's devices look like a local adapter's to the
/// drivers (name, service UUIDs, manufacturer and service data, appearance, TX power). A proxy sends the bytes as
/// they came over the air, advertisement and scan response together; malformed structures end the decoding there,
/// keeping what came before, as BlueZ does.
public struct AdvertisingData: Equatable, Sendable {
    public var flags: UInt8?
    /// The complete local name, else the shortened one.
    public var localName: String?
    /// Lower-case 128-bit UUIDs (`0000180d-0000-1000-8000-00805f9b34fb`), in the order advertised, without repeats.
    public var serviceUUIDs: [String] = []
    /// By company identifier.
    public var manufacturerData: [UInt16: [UInt8]] = [:]
    /// By lower-case 128-bit service UUID.
    public var serviceData: [String: [UInt8]] = [:]
    public var appearance: UInt16?
    public var txPower: Int8?

    public init() {}

    /// Decodes `bytes`: a sequence of `length, type, value` structures; a zero length ends the significant part.
    public init(decoding bytes: [UInt8]) {
        var index = 0
        var shortenedName: String?
        while index < bytes.count {
            let length = Int(bytes[index])
            guard length > 0 else { break }
            guard index + 1 + length <= bytes.count else { break }
            let type = bytes[index + 1]
            let value = Array(bytes[(index + 2)..<(index + 1 + length)])
            index += 1 + length
            switch type {
            case 0x01: flags = value.first
            case 0x02, 0x03: addUUIDs(value, width: 2)
            case 0x04, 0x05: addUUIDs(value, width: 4)
            case 0x06, 0x07: addUUIDs(value, width: 16)
            case 0x08: shortenedName = String(decoding: value, as: UTF8.self)
            case 0x09: localName = String(decoding: value, as: UTF8.self)
            case 0x0A: txPower = value.first.map { Int8(bitPattern: $0) }
            case 0x16 where value.count >= 2: serviceData[ProxyUUID.expand(value[0..<2])] = Array(value[2...])
            case 0x20 where value.count >= 4: serviceData[ProxyUUID.expand(value[0..<4])] = Array(value[4...])
            case 0x21 where value.count >= 16: serviceData[ProxyUUID.expand(value[0..<16])] = Array(value[16...])
            case 0x19 where value.count == 2: appearance = UInt16(value[0]) | UInt16(value[1]) << 8
            case 0xFF where value.count >= 2: manufacturerData[UInt16(value[0]) | UInt16(value[1]) << 8] = Array(value[2...])
            default: break
            }
        }
        if localName == nil { localName = shortenedName }
    }

    private mutating func addUUIDs(_ value: [UInt8], width: Int) {
        var offset = 0
        while offset + width <= value.count {
            let uuid = ProxyUUID.expand(value[offset..<offset + width])
            if !serviceUUIDs.contains(uuid) { serviceUUIDs.append(uuid) }
            offset += width
        }
    }
}

/// UUIDs as ESPHome's API and the air carry them, turned into the lower-case 128-bit strings BlueZ's model uses.
public enum ProxyUUID {
    static let baseSuffix = "-0000-1000-8000-00805f9b34fb"

    /// 2, 4 or 16 little-endian bytes (the air's order) as a 128-bit UUID string.
    public static func expand(_ littleEndian: ArraySlice<UInt8>) -> String {
        if littleEndian.count <= 4 {
            let value = littleEndian.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            return short(value)
        }
        let bigEndian = Array(littleEndian.reversed())
        return format(bigEndian)
    }

    /// A 16- or 32-bit UUID on the Bluetooth base UUID.
    public static func short(_ value: UInt32) -> String {
        hex(value, digits: 8) + baseSuffix
    }

    /// ESPHome's `repeated uint64 uuid` (high 64 bits first) or its `short_uuid`, as the API sends one or the other.
    public static func fromAPI(_ words: [UInt64], short: UInt32) -> String? {
        if words.count == 2 {
            let bytes = (0..<8).reversed().map { UInt8(truncatingIfNeeded: words[0] >> (8 * UInt64($0))) }
                + (0..<8).reversed().map { UInt8(truncatingIfNeeded: words[1] >> (8 * UInt64($0))) }
            return format(bytes)
        }
        return short != 0 ? self.short(short) : nil
    }

    private static func format(_ bytes: [UInt8]) -> String {
        let text = bytes.map { hex(UInt32($0), digits: 2) }.joined()
        let characters = Array(text)
        return [characters[0..<8], characters[8..<12], characters[12..<16], characters[16..<20], characters[20..<32]]
            .map { String($0) }.joined(separator: "-")
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
