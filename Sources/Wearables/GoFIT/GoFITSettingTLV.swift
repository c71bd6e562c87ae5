/// One setting on the wire of the GoFIT vendor service: id u8, length u8, value (docs/protocols/gofit.md,
/// "Settings"). `SETTINGS_READ` answers and `SETTINGS_WRITE` carries a list of them back to back.
public struct GoFITSettingTLV: Sendable, Equatable {
    public var id: UInt8
    public var value: [UInt8]

    public init(id: UInt8, value: [UInt8]) {
        self.id = id
        self.value = value
    }

    /// The TLVs back to back. A value longer than 255 bytes cannot be framed; the settings codec never makes one.
    public static func encode(_ settings: [GoFITSettingTLV]) -> [UInt8] {
        var bytes: [UInt8] = []
        for setting in settings {
            precondition(setting.value.count <= 255, "a GoFIT setting value is at most 255 bytes")
            bytes.append(setting.id)
            bytes.append(UInt8(setting.value.count))
            bytes += setting.value
        }
        return bytes
    }

    /// Splits a list of TLVs; a length that runs past the end is `truncated`.
    public static func decodeList(_ bytes: [UInt8]) throws(GATTCodecError) -> [GoFITSettingTLV] {
        var settings: [GoFITSettingTLV] = []
        var index = 0
        while index < bytes.count {
            guard index + 2 <= bytes.count else { throw .truncated(expected: index + 2, actual: bytes.count) }
            let length = Int(bytes[index + 1])
            let end = index + 2 + length
            guard end <= bytes.count else { throw .truncated(expected: end, actual: bytes.count) }
            settings.append(GoFITSettingTLV(id: bytes[index], value: Array(bytes[(index + 2)..<end])))
            index = end
        }
        return settings
    }
}
