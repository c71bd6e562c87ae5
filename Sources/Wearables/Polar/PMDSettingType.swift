/// One setting of a PMD measurement, the type byte of a settings TLV, and how wide each of its values is.
///
/// Types and widths: `polarofficial/polar-ble-sdk` Android `pmd/PmdSetting.kt` (`PmdSettingType`,
/// `typeToFieldSize`); Table 5 of `technical_documentation/online_measurement.pdf` gives the same widths and
/// their meaning (sample rate uint16 Hz, resolution uint16 bits, range uint16 ±unit, channels uint8, factor
/// IEEE-754 single) and says type 3 is not used.
public enum PMDSettingType: UInt8, Sendable, Hashable, CaseIterable, Comparable {
    /// Samples per second.
    case sampleRate = 0
    /// Bits per sample; the delta decoder needs it for the reference sample's width.
    case resolution = 1
    /// Full scale, ± in the measurement's unit (G for ACC, deg/s for the gyroscope).
    case range = 2
    /// Full scale in milli-units. The SDK reads it as a signed 32-bit number; the document calls it unused.
    case rangeMilliunit = 3
    /// Channels per sample; also needed to decode delta frames.
    case channels = 4
    /// The IEEE-754 single that turns raw sample values into the unit (the start response carries it).
    case factor = 5
    /// Security (an encryption strategy and key for offline recordings); 16 bytes in a settings read.
    case security = 6

    /// Bytes per value on the wire.
    public var valueWidth: Int {
        switch self {
        case .sampleRate, .resolution, .range: 2
        case .rangeMilliunit, .factor: 4
        case .channels: 1
        case .security: 16
        }
    }

    /// Range milli-unit values are read as signed (the SDK's `PmdSettingTest.testPmdSettingWithRangeMilliUnit`
    /// expects -1 for FF FF FF FF); the others as the unsigned numbers the document names.
    var isSigned: Bool { self == .rangeMilliunit }

    /// Decodes one numeric value (not `security`).
    func value(from bytes: ArraySlice<UInt8>) -> Int {
        var unsigned: UInt64 = 0
        for (index, byte) in bytes.enumerated() { unsigned |= UInt64(byte) << (8 * index) }
        guard isSigned else { return Int(unsigned) }
        let shift = 64 - 8 * bytes.count
        return Int(Int64(bitPattern: unsigned << shift) >> shift)
    }

    /// The `valueWidth` low bytes of `value`, little-endian.
    func bytes(of value: Int) -> [UInt8] {
        (0..<valueWidth).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    /// Whether `value` survives `bytes(of:)` → `value(from:)`.
    func canHold(_ value: Int) -> Bool {
        guard self != .security else { return false }
        let bits = 8 * valueWidth
        return isSigned ? (-(1 << (bits - 1))..<(1 << (bits - 1))).contains(value) : (0..<(1 << bits)).contains(value)
    }

    public static func < (lhs: PMDSettingType, rhs: PMDSettingType) -> Bool { lhs.rawValue < rhs.rawValue }
}
