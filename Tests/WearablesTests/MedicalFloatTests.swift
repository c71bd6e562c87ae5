import Testing
import Wearables

@Suite("IEEE-11073 SFLOAT and FLOAT")
struct MedicalFloatTests {
    @Test("SFLOAT numbers: mantissa × 10^exponent with both fields signed")
    func sfloatNumbers() {
        // 0xF16E: exponent nibble 0xF = −1; mantissa 0x16E = 366 → 36.6.
        #expect(MedicalFloat16(bits: 0xF16E).value == .value(36.6))
        // 0xFFFF: exponent −1; mantissa 0xFFF is −1 in 12-bit two's complement → −0.1.
        #expect(MedicalFloat16(bits: 0xFFFF).value == .value(-0.1))
        // 0xE830: exponent 0xE = −2; mantissa 0x830 = 2096 − 4096 = −2000 → −20.00.
        #expect(MedicalFloat16(bits: 0xE830).value == .value(-20))
        #expect(MedicalFloat16(bits: 0xE830).mantissa == -2000)
        #expect(MedicalFloat16(bits: 0xE830).exponent == -2)
        // 0x2001: exponent 2, mantissa 1 → 100.
        #expect(MedicalFloat16(bits: 0x2001).value == .value(100))
        #expect(MedicalFloat16(bits: 0x0062).value == .value(98))
    }

    @Test("SFLOAT special values are the whole patterns with exponent 0")
    func sfloatSpecials() {
        #expect(MedicalFloat16(bits: 0x07FF).value == .nan)
        #expect(MedicalFloat16(bits: 0x0800).value == .notAtThisResolution)
        #expect(MedicalFloat16(bits: 0x07FE).value == .positiveInfinity)
        #expect(MedicalFloat16(bits: 0x0802).value == .negativeInfinity)
        #expect(MedicalFloat16(bits: 0x0801).value == .reserved)
        #expect(MedicalFloat16.nan.value.doubleValue == nil)
        // The same mantissa with exponent 1 is an ordinary number: 2047 × 10.
        #expect(MedicalFloat16(bits: 0x17FF).value == .value(20470))
    }

    @Test("FLOAT numbers and special values")
    func float() {
        // 0xFF00016E: exponent 0xFF = −1; mantissa 0x00016E = 366 → 36.6.
        #expect(MedicalFloat32(bits: 0xFF00_016E).value == .value(36.6))
        // 0xFEFFFF9C: exponent −2; mantissa 0xFFFF9C = −100 in 24-bit two's complement → −1.00.
        #expect(MedicalFloat32(bits: 0xFEFF_FF9C).value == .value(-1))
        // 0x03000005: exponent 3, mantissa 5 → 5000.
        #expect(MedicalFloat32(bits: 0x0300_0005).value == .value(5000))
        #expect(MedicalFloat32(bits: 0x007F_FFFF).value == .nan)
        #expect(MedicalFloat32(bits: 0x0080_0000).value == .notAtThisResolution)
        #expect(MedicalFloat32(bits: 0x007F_FFFE).value == .positiveInfinity)
        #expect(MedicalFloat32(bits: 0x0080_0002).value == .negativeInfinity)
        #expect(MedicalFloat32(bits: 0x0080_0001).value == .reserved)
    }

    @Test("encoding at a chosen exponent gives the number back exactly")
    func encodes() throws {
        let bodyTemperature = try MedicalFloat16(36.7, exponent: -1)
        #expect(bodyTemperature.bits == 0xF16F)
        #expect(bodyTemperature.value == .value(36.7))
        #expect(try MedicalFloat16(98.6, exponent: -1).bits == 0xF3DA)
        #expect(try MedicalFloat16(98.6, exponent: -1).value == .value(98.6))
        #expect(try MedicalFloat16(-20, exponent: -2).bits == 0xE830)
        #expect(try MedicalFloat16(100, exponent: 2).bits == 0x2001)
        #expect(try MedicalFloat32(37.25, exponent: -2).bits == 0xFE00_0E8D)
        #expect(try MedicalFloat32(37.25, exponent: -2).value == .value(37.25))
        #expect(try MedicalFloat32(-1, exponent: -2).bits == 0xFEFF_FF9C)
        // Rounded to the chosen precision.
        #expect(try MedicalFloat16(36.66, exponent: -1).value == .value(36.7))
    }

    @Test("Double NaN and infinities become the special values")
    func encodesSpecials() throws {
        #expect(try MedicalFloat16(.nan, exponent: 0) == .nan)
        #expect(try MedicalFloat16(.infinity, exponent: 0) == .positiveInfinity)
        #expect(try MedicalFloat32(-.infinity, exponent: 0) == .negativeInfinity)
    }

    @Test("a number that does not fit, or a bad exponent, is refused")
    func refuses() throws {
        // 37.25 needs mantissa 3725 at exponent −2, beyond SFLOAT's 12 bits.
        #expect(throws: GATTCodecError.outOfRange(field: "mantissa", value: 3725)) {
            try MedicalFloat16(37.25, exponent: -2)
        }
        // 2046 and 2047 are the +INF and NaN mantissas; the encoder never writes them.
        #expect(throws: GATTCodecError.outOfRange(field: "mantissa", value: 2046)) {
            try MedicalFloat16(204.6, exponent: -1)
        }
        #expect(try MedicalFloat16(204.5, exponent: -1).mantissa == 2045)
        #expect(throws: GATTCodecError.outOfRange(field: "exponent", value: 8)) { try MedicalFloat16(1, exponent: 8) }
        #expect(throws: GATTCodecError.outOfRange(field: "exponent", value: -129)) {
            try MedicalFloat32(1, exponent: -129)
        }
        #expect(throws: GATTCodecError.self) { try MedicalFloat32(1e300, exponent: 0) }
    }

    @Test("every SFLOAT pattern that is a number re-encodes to itself at its own exponent")
    func everySFloatRoundTrips() throws {
        var checked = 0
        for bits in UInt16.min...UInt16.max {
            let original = MedicalFloat16(bits: bits)
            guard case .value(let number) = original.value, abs(original.mantissa) <= 2045 else { continue }
            let again = try MedicalFloat16(number, exponent: original.exponent)
            #expect(again.value == original.value, "0x\(String(bits, radix: 16))")
            checked += 1
        }
        #expect(checked == 16 * 4091)
    }
}
