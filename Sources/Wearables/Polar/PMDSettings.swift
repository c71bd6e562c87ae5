/// The settings a measurement offers: the parameters of a "get measurement settings" response (and of a start
/// response, which carries the factor), a list of TLVs — type u8, count u8, `count` values of the type's width.
///
/// Layout: `polarofficial/polar-ble-sdk` Android `pmd/PmdSetting.kt` (`parsePmdSettingsData`), vectors in
/// `PmdSettingTest.kt`. Like the SDK, a parameter list of one byte or none is "no settings", a type that repeats
/// adds its values to the first, and a count of zero gives the type an empty list. Unlike the SDK, an unknown
/// type is `unknownIdentifier` (the SDK indexes past its enum) and security values (16 bytes, which the SDK
/// cannot read) are kept as bytes.
public struct PMDSettings: Sendable, Hashable {
    /// Every numeric setting's values in the order sent; the factor as its IEEE-754 bit pattern. Never holds
    /// `.security` when decoded.
    public var values: [PMDSettingType: [Int]]
    /// The 16-byte values of a security setting, if the device sent one.
    public var security: [[UInt8]]

    public init(values: [PMDSettingType: [Int]] = [:], security: [[UInt8]] = []) {
        self.values = values
        self.security = security
    }

    public subscript(type: PMDSettingType) -> [Int] { values[type] ?? [] }

    /// The conversion factor, when the device sent one (start responses do for compressed streams).
    public var factor: Float? {
        values[.factor]?.first.map { Float(bitPattern: UInt32(truncatingIfNeeded: $0)) }
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> PMDSettings {
        var settings = PMDSettings()
        guard bytes.count > 1 else { return settings }
        var reader = ByteReader(bytes)
        while !reader.isAtEnd {
            let typeByte = try reader.readUInt8()
            guard let type = PMDSettingType(rawValue: typeByte) else {
                throw .unknownIdentifier(field: "PMD setting type", value: Int(typeByte))
            }
            let count = Int(try reader.readUInt8())
            if type == .security {
                for _ in 0..<count { settings.security.append(Array(try reader.readBytes(type.valueWidth))) }
                continue
            }
            var list = settings.values[type] ?? []
            for _ in 0..<count { list.append(type.value(from: try reader.readBytes(type.valueWidth))) }
            settings.values[type] = list
        }
        return settings
    }

    /// One TLV per type in type order, security last (a `.security` entry in `values` is ignored); a list of
    /// more than 255 values continues in further TLVs of the same type, which `decode` joins again. Throws
    /// `outOfRange` for a value its width cannot hold and for a security value that is not 16 bytes.
    public func encode() throws(GATTCodecError) -> [UInt8] {
        var writer = ByteWriter()
        for type in values.keys.sorted() where type != .security {
            let list = values[type] ?? []
            for value in list where !type.canHold(value) { throw .outOfRange(field: "PMD setting \(type)", value: value) }
            for chunk in Self.chunks(of: list.count) {
                writer.write(type.rawValue)
                writer.write(UInt8(chunk.count))
                for value in list[chunk] { writer.write(contentsOf: type.bytes(of: value)) }
            }
        }
        for value in security where value.count != PMDSettingType.security.valueWidth {
            throw .outOfRange(field: "PMD security setting length", value: value.count)
        }
        for chunk in Self.chunks(of: security.count) where !chunk.isEmpty {
            writer.write(PMDSettingType.security.rawValue)
            writer.write(UInt8(chunk.count))
            for value in security[chunk] { writer.write(contentsOf: value) }
        }
        return writer.bytes
    }

    /// Index ranges of at most 255 values (what a count byte can say); one empty range for an empty list, so
    /// that a type sent with no values stays in `values`.
    private static func chunks(of count: Int) -> [Range<Int>] {
        guard count > 0 else { return [0..<0] }
        return stride(from: 0, to: count, by: 255).map { $0..<min(count, $0 + 255) }
    }

    /// The largest offered value of every numeric type but the factor (the SDK's `maxSettings`, what it starts a
    /// stream with when the user picks nothing).
    public var largest: PMDSettingSelection {
        var selection = PMDSettingSelection()
        for (type, list) in values where type != .factor && type != .security {
            if let maximum = list.max() { selection.values[type] = maximum }
        }
        return selection
    }
}

/// The settings a start request asks for: one value per type (`PmdSetting.selected` in the SDK).
public struct PMDSettingSelection: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    public var values: [PMDSettingType: Int]

    public init(_ values: [PMDSettingType: Int] = [:]) { self.values = values }

    public init(dictionaryLiteral elements: (PMDSettingType, Int)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    public subscript(type: PMDSettingType) -> Int? {
        get { values[type] }
        set { values[type] = newValue }
    }

    /// Type, count 1, value — in type order (the SDK's `serializeSelected`, which writes the `valueWidth` low
    /// bytes of each value). A security entry is left out: security goes in `PMDSecurity`. The SDK also leaves
    /// the factor out, because its selection remembers the start response's factor; this type holds only what
    /// the caller asks for, so a factor given is written.
    func encode() -> [UInt8] {
        var bytes: [UInt8] = []
        for type in values.keys.sorted() where type != .security {
            bytes += [type.rawValue, 1] + type.bytes(of: values[type] ?? 0)
        }
        return bytes
    }
}
