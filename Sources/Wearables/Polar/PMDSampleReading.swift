/// Helpers the PMD sample decoders share.
extension ByteReader {
    /// A little-endian two's-complement field of 1–4 bytes (the SDK's `TypeUtils.convertArrayToSignedInt`).
    mutating func readSignedPMD(width: Int) throws(GATTCodecError) -> Int32 {
        let bytes = try readBytes(width)
        var value: UInt32 = 0
        for (index, byte) in bytes.enumerated() { value |= UInt32(byte) << (8 * index) }
        let shift = UInt32(32 - 8 * width)
        return Int32(bitPattern: value << shift) >> shift
    }
}

extension PMDDataFrame {
    /// Refuses a frame of another measurement type, so a driver cannot decode ECG bytes as acceleration.
    func requireType(_ type: PMDMeasurementType) throws(GATTCodecError) {
        guard measurementType == type else {
            throw .unknownIdentifier(field: "PMD \(type) frame measurement type", value: Int(measurementTypeByte))
        }
    }
}

enum PMDScaling {
    /// Kotlin's `Float.toInt()`: toward zero, NaN as 0, saturating at the ends — the SDK's conversion of scaled
    /// values, without Swift's trap on a factor a device got wrong.
    static func integer(_ value: Float) -> Int32 {
        if value.isNaN { return 0 }
        if value >= 2_147_483_648 { return .max }
        if value <= -2_147_483_648 { return .min }
        return Int32(value)
    }

    /// `sample × factor` as the SDK applies it to integer channels: untouched when the factor is exactly 1.
    static func scaled(_ sample: Int32, by factor: Float) -> Int32 {
        factor == 1 ? sample : integer(Float(sample) * factor)
    }
}

/// Writes `value`'s low `width` bytes, little-endian, after checking they hold it.
func appendSigned(_ value: Int32, width: Int, to bytes: inout [UInt8], field: String) throws(GATTCodecError) {
    let bits = 8 * width
    guard bits == 32 || (-(Int32(1) << (bits - 1))..<(Int32(1) << (bits - 1))).contains(value) else {
        throw .outOfRange(field: field, value: Int(value))
    }
    for index in 0..<width { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
}
