/// What an IEEE-11073 SFLOAT or FLOAT means: a number or one of the special values.
///
/// The special values are why these cannot simply be `Double`s: a pulse oximeter that has lost the finger
/// sends "not a number" for SpO2, and a thermometer reading beyond its range sends an infinity; a gateway must
/// say "no reading", not publish a bogus number.
public enum MedicalFloat: Sendable, Equatable {
    case value(Double)
    case nan
    /// NRes: a value exists but cannot be shown at this precision.
    case notAtThisResolution
    case positiveInfinity
    case negativeInfinity
    /// A bit pattern IEEE-11073 keeps for future use.
    case reserved

    /// The number, or nil for every special value.
    public var doubleValue: Double? {
        if case .value(let number) = self { return number }
        return nil
    }
}

/// IEEE-11073 SFLOAT-Type (IEEE 11073-20601, "SFLOAT-Type"; used by the Pulse Oximeter and other SIG health
/// profiles): 16 bits, a 4-bit signed exponent above a 12-bit signed mantissa, value = mantissa × 10^exponent.
///
/// Stores the bit pattern, not the number, so the precision the device chose survives a decode → encode round
/// trip exactly: 36.6 sent as 366 × 10^−1 and as 3660 × 10^−2 are different patterns of the same number.
public struct MedicalFloat16: Sendable, Equatable, Hashable {
    public var bits: UInt16

    public init(bits: UInt16) { self.bits = bits }

    public static let nan = MedicalFloat16(bits: 0x07FF)
    public static let notAtThisResolution = MedicalFloat16(bits: 0x0800)
    public static let positiveInfinity = MedicalFloat16(bits: 0x07FE)
    public static let negativeInfinity = MedicalFloat16(bits: 0x0802)
    public static let reserved = MedicalFloat16(bits: 0x0801)

    static let layout = MedicalFloatLayout(mantissaBits: 12, exponentBits: 4)

    /// `value` rounded to a multiple of 10^`exponent`: `MedicalFloat16(36.7, exponent: -1)` stores 367 × 10^−1.
    /// A Double NaN or infinity becomes the matching special value.
    ///
    /// Throws `outOfRange` when the exponent is not −8…7 or the mantissa would not fit. Mantissas ±2046 and
    /// ±2047 (and −2048) are refused at every exponent, although the standard reserves them only with exponent 0:
    /// some decoders test the mantissa alone, and the simulator must not send them something they misread.
    public init(_ value: Double, exponent: Int) throws(GATTCodecError) {
        bits = UInt16(try Self.layout.encode(value, exponent: exponent, specials: Self.specials))
    }

    public var value: MedicalFloat {
        Self.layout.decode(UInt32(bits), specials: Self.specials)
    }

    public var mantissa: Int { Self.layout.mantissa(of: UInt32(bits)) }
    public var exponent: Int { Self.layout.exponent(of: UInt32(bits)) }

    private static let specials = MedicalFloatSpecials(
        nan: 0x07FF, notAtThisResolution: 0x0800, positiveInfinity: 0x07FE, negativeInfinity: 0x0802,
        reserved: [0x0801]
    )
}

/// IEEE-11073 FLOAT-Type (IEEE 11073-20601, "FLOAT-Type"; used by the Health Thermometer): 32 bits, an 8-bit
/// signed exponent above a 24-bit signed mantissa. Stores the bit pattern, for the same reason as
/// `MedicalFloat16`.
public struct MedicalFloat32: Sendable, Equatable, Hashable {
    public var bits: UInt32

    public init(bits: UInt32) { self.bits = bits }

    public static let nan = MedicalFloat32(bits: 0x007F_FFFF)
    public static let notAtThisResolution = MedicalFloat32(bits: 0x0080_0000)
    public static let positiveInfinity = MedicalFloat32(bits: 0x007F_FFFE)
    public static let negativeInfinity = MedicalFloat32(bits: 0x0080_0002)
    public static let reserved = MedicalFloat32(bits: 0x0080_0001)

    static let layout = MedicalFloatLayout(mantissaBits: 24, exponentBits: 8)

    /// `value` rounded to a multiple of 10^`exponent` (−128…127). As with `MedicalFloat16`, the mantissas the
    /// standard reserves at exponent 0 (±0x7FFFFE, ±0x7FFFFF, −0x800000) are refused at every exponent.
    public init(_ value: Double, exponent: Int) throws(GATTCodecError) {
        bits = try Self.layout.encode(value, exponent: exponent, specials: Self.specials)
    }

    public var value: MedicalFloat {
        Self.layout.decode(bits, specials: Self.specials)
    }

    public var mantissa: Int { Self.layout.mantissa(of: bits) }
    public var exponent: Int { Self.layout.exponent(of: bits) }

    private static let specials = MedicalFloatSpecials(
        nan: 0x007F_FFFF, notAtThisResolution: 0x0080_0000, positiveInfinity: 0x007F_FFFE,
        negativeInfinity: 0x0080_0002, reserved: [0x0080_0001]
    )
}

/// The whole bit patterns IEEE-11073 gives special meanings (all with exponent 0).
struct MedicalFloatSpecials: Sendable {
    var nan: UInt32
    var notAtThisResolution: UInt32
    var positiveInfinity: UInt32
    var negativeInfinity: UInt32
    var reserved: Set<UInt32>
}

/// The arithmetic SFLOAT and FLOAT share; they differ only in field widths and special patterns.
struct MedicalFloatLayout: Sendable {
    let mantissaBits: Int
    let exponentBits: Int

    private var mantissaMask: UInt32 { (1 << UInt32(mantissaBits)) - 1 }
    private var exponentMask: UInt32 { (1 << UInt32(exponentBits)) - 1 }
    private var exponentRange: ClosedRange<Int> { -(1 << (exponentBits - 1))...((1 << (exponentBits - 1)) - 1) }
    /// The largest mantissa magnitude the encoder writes: the top three positive patterns and the bottom three
    /// negative ones are the special values' mantissas.
    private var encodableMantissa: Int { (1 << (mantissaBits - 1)) - 3 }

    func mantissa(of bits: UInt32) -> Int { signExtend(bits & mantissaMask, width: mantissaBits) }
    func exponent(of bits: UInt32) -> Int {
        signExtend((bits >> UInt32(mantissaBits)) & exponentMask, width: exponentBits)
    }

    func decode(_ bits: UInt32, specials: MedicalFloatSpecials) -> MedicalFloat {
        switch bits {
        case specials.nan: return .nan
        case specials.notAtThisResolution: return .notAtThisResolution
        case specials.positiveInfinity: return .positiveInfinity
        case specials.negativeInfinity: return .negativeInfinity
        case _ where specials.reserved.contains(bits): return .reserved
        default: return .value(Self.scale(mantissa(of: bits), byPowerOfTen: exponent(of: bits)))
        }
    }

    func encode(_ value: Double, exponent: Int, specials: MedicalFloatSpecials) throws(GATTCodecError) -> UInt32 {
        if value.isNaN { return specials.nan }
        if value.isInfinite { return value > 0 ? specials.positiveInfinity : specials.negativeInfinity }
        guard exponentRange.contains(exponent) else { throw .outOfRange(field: "exponent", value: exponent) }
        let scaled = Self.scale(value, byPowerOfTen: -exponent).rounded()
        let limit = Double(encodableMantissa)
        guard scaled >= -limit, scaled <= limit else {
            // Clamped so that reporting a mantissa of 10^300 cannot trap on the conversion to Int.
            throw .outOfRange(field: "mantissa", value: Int(max(min(scaled, 1e15), -1e15)))
        }
        let mantissa = Int(scaled)
        let exponentField = UInt32(truncatingIfNeeded: exponent) & exponentMask
        return exponentField << UInt32(mantissaBits) | UInt32(truncatingIfNeeded: mantissa) & mantissaMask
    }

    private func signExtend(_ field: UInt32, width: Int) -> Int {
        let value = Int(field)
        return value >= 1 << (width - 1) ? value - (1 << width) : value
    }

    /// `number` × 10^`power`, dividing for negative powers so that 986 × 10^−1 is the Double nearest 98.6 —
    /// multiplying by the inexact 0.1 would give 98.60000000000001. Powers of ten up to 10^22 are exact Doubles.
    private static func scale<N: BinaryInteger>(_ number: N, byPowerOfTen power: Int) -> Double {
        scale(Double(number), byPowerOfTen: power)
    }

    private static func scale(_ number: Double, byPowerOfTen power: Int) -> Double {
        var magnitude = 1.0
        for _ in 0..<power.magnitude { magnitude *= 10 }
        return power >= 0 ? number * magnitude : number / magnitude
    }
}
