/// One notification of the skin-temperature characteristic (0x3EA6): four u16 little-endian samples, then
/// four bytes of unknown metadata; 12 bytes.
///
/// Reverse-engineered: `mountainaught/e4-python-server` `main.py` (`StreamProcessor.__handle_temp`) reads the
/// samples with `struct.unpack_from('<H', …)` — little-endian, although its docstring says big-endian; we follow
/// the code, which its author ran against a device — and converts with °C = raw × 0.02 − 276.0, plus a
/// calibration of +0.46 °C (`TEMP_CALIB`) that its author added after comparing with a reference. 0.02 K per
/// count is the scale of an infrared thermometer's Kelvin register; −276.0 rather than −273.15 is the source's
/// own fit, so these values are **approximate** to a few tenths of a degree. The metadata is kept as sent
/// because nothing says what it means. The SDK documents 4 Hz, so a packet covers one second.
///
/// Longer values are refused as `outOfRange` of the length (no flags, so extra bytes mean an unknown layout).
public struct E4TemperaturePacket: GATTCharacteristicValue, Hashable {
    public static let characteristicUUID = E4UUID.Short.temperature
    public static let samplesPerPacket = 4
    public static let metadataByteCount = 4
    public static let byteCount = samplesPerPacket * 2 + metadataByteCount

    /// Kelvin per count and the source's offset, before calibration.
    public static let scale = 0.02
    public static let offset = -276.0
    /// `main.py`'s `TEMP_CALIB`, added to every sample.
    public static let calibration = 0.46

    /// Raw counts, oldest first.
    public let rawSamples: [UInt16]
    /// The four bytes after the samples, meaning unknown.
    public let metadata: [UInt8]

    public init(rawSamples: [UInt16], metadata: [UInt8] = [0, 0, 0, 0]) throws(GATTCodecError) {
        guard rawSamples.count == Self.samplesPerPacket else {
            throw .outOfRange(field: "E4 temperature sample count", value: rawSamples.count)
        }
        guard metadata.count == Self.metadataByteCount else {
            throw .outOfRange(field: "E4 temperature metadata length", value: metadata.count)
        }
        self.rawSamples = rawSamples
        self.metadata = metadata
    }

    /// Each sample in °C, calibration included.
    public var celsius: [Double] { rawSamples.map(Self.celsius(ofRaw:)) }

    public static func celsius(ofRaw raw: UInt16) -> Double {
        Double(raw) * scale + offset + calibration
    }

    /// The nearest raw count for a temperature, clamped to what a u16 holds; for the simulated E4.
    public static func raw(ofCelsius celsius: Double) -> UInt16 {
        let counts = ((celsius - offset - calibration) / scale).rounded()
        guard counts.isFinite else { return 0 }
        return UInt16(min(max(counts, 0), Double(UInt16.max)))
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> E4TemperaturePacket {
        var reader = ByteReader(bytes)
        var samples: [UInt16] = []
        samples.reserveCapacity(samplesPerPacket)
        for _ in 0..<samplesPerPacket { samples.append(try reader.read(UInt16.self, byteOrder: .littleEndian)) }
        let metadata = Array(try reader.readBytes(metadataByteCount))
        guard reader.isAtEnd else { throw .outOfRange(field: "E4 temperature packet length", value: bytes.count) }
        return try E4TemperaturePacket(rawSamples: samples, metadata: metadata)
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter()
        for sample in rawSamples { writer.write(sample, byteOrder: .littleEndian) }
        writer.write(contentsOf: metadata)
        return writer.bytes
    }
}
