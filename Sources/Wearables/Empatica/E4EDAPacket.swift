/// One notification of the EDA (GSR) characteristic (0x3EA8): six 24-bit big-endian samples, then a 2-byte
/// packet counter; 20 bytes.
///
/// Reverse-engineered: `mountainaught/e4-python-server` `main.py` (`StreamProcessor.__handle_gsr`) reads the
/// six samples big-endian and converts with µS = 1 000 000 / raw, so raw is a resistance in ohms. It names
/// the last two bytes a packet counter but never reads them, so **the counter's byte order (big-endian, like
/// the samples) and its step (+1 per packet, wrapping at 65 536) are modeled**; `E4SampleClock` relies on both
/// to notice lost packets. The EmpaLink SDK reference gives microsiemens as the unit; its 4 Hz rate makes a
/// packet every 1.5 s.
///
/// The samples and counter are kept as sent so that `decode(encode(x)) == x`. Longer values are refused as
/// `outOfRange` of the length: the layout has no flags, so extra bytes would mean a layout we do not know.
public struct E4EDAPacket: GATTCharacteristicValue, Hashable {
    public static let characteristicUUID = E4UUID.Short.eda
    public static let samplesPerPacket = 6
    public static let byteCount = samplesPerPacket * 3 + 2
    public static let maximumRawSample: UInt32 = 0xFF_FFFF

    /// Skin resistance in ohms, 0…0xFFFFFF, oldest first.
    public let rawSamples: [UInt32]
    public let counter: UInt16

    /// Throws `outOfRange` unless there are `samplesPerPacket` samples, each fitting 24 bits.
    public init(rawSamples: [UInt32], counter: UInt16) throws(GATTCodecError) {
        guard rawSamples.count == Self.samplesPerPacket else {
            throw .outOfRange(field: "E4 EDA sample count", value: rawSamples.count)
        }
        if let wide = rawSamples.first(where: { $0 > Self.maximumRawSample }) {
            throw .outOfRange(field: "E4 EDA sample", value: Int(wide))
        }
        self.rawSamples = rawSamples
        self.counter = counter
    }

    /// Skin conductance in µS for each sample; nil where raw is 0. `main.py` publishes 0 µS there, but a raw 0
    /// is zero resistance — a short circuit, not the open circuit of a band off the wrist that 0 µS would
    /// suggest — so no honest conductance exists and the sample is better dropped than published.
    public var microsiemens: [Double?] { rawSamples.map(Self.microsiemens(ofRaw:)) }

    public static func microsiemens(ofRaw raw: UInt32) -> Double? {
        raw == 0 ? nil : 1_000_000 / Double(raw)
    }

    /// The nearest raw sample for a conductance, within 1…0xFFFFFF (0.06 µS … 1 S); for the simulated E4.
    /// No conductance (0, negative or NaN) gives the highest resistance the field holds.
    public static func raw(ofMicrosiemens microsiemens: Double) -> UInt32 {
        guard microsiemens > 0 else { return maximumRawSample }
        let ohms = (1_000_000 / microsiemens).rounded()
        return UInt32(min(max(ohms, 1), Double(maximumRawSample)))
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> E4EDAPacket {
        var reader = ByteReader(bytes)
        var samples: [UInt32] = []
        samples.reserveCapacity(samplesPerPacket)
        for _ in 0..<samplesPerPacket { samples.append(try reader.readUInt24(byteOrder: .bigEndian)) }
        let counter = try reader.read(UInt16.self, byteOrder: .bigEndian)
        guard reader.isAtEnd else { throw .outOfRange(field: "E4 EDA packet length", value: bytes.count) }
        return try E4EDAPacket(rawSamples: samples, counter: counter)
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter()
        for sample in rawSamples { writer.writeUInt24(sample, byteOrder: .bigEndian) }
        writer.write(counter, byteOrder: .bigEndian)
        return writer.bytes
    }
}
