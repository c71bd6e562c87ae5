/// One notification of the PMD data characteristic: the measurement type byte, a 64-bit little-endian
/// timestamp (ns since 2000-01-01T00:00:00 UTC, the time of the frame's last sample), the frame type byte (low
/// seven bits the frame type, the top bit set for a delta-compressed frame), then the samples.
///
/// Layout: `polarofficial/polar-ble-sdk` Android `pmd/PmdDataFrame.kt` (masks 0x3F for the type, 0x7F and
/// 0x80 for the frame type) and section 4 of `technical_documentation/online_measurement.pdf` (the epoch, the
/// compression bit, "data frame content … starting from index 10"). The per-type decoders (`PMDECGData`,
/// `PMDAccelerationData`, …) read `content`; `PMDSampleTiming` stamps their samples.
public struct PMDDataFrame: Sendable, Hashable {
    public static let headerLength = 10

    /// Kept as sent; `measurementType` names it.
    public var measurementTypeByte: UInt8
    /// Nanoseconds since 2000-01-01T00:00:00 UTC (`PMDSampleTiming.unixMilliseconds(fromPolarNanoseconds:)`).
    public var timestamp: UInt64
    /// 0…127.
    public var frameType: UInt8
    public var isCompressed: Bool
    public var content: [UInt8]

    public init(measurementTypeByte: UInt8, timestamp: UInt64, frameType: UInt8, isCompressed: Bool, content: [UInt8]) {
        self.measurementTypeByte = measurementTypeByte
        self.timestamp = timestamp
        self.frameType = frameType & 0x7F
        self.isCompressed = isCompressed
        self.content = content
    }

    public init(_ type: PMDMeasurementType, timestamp: UInt64, frameType: UInt8, isCompressed: Bool, content: [UInt8]) {
        self.init(measurementTypeByte: type.rawValue, timestamp: timestamp, frameType: frameType,
                  isCompressed: isCompressed, content: content)
    }

    public var measurementType: PMDMeasurementType? { PMDMeasurementType(typeByte: measurementTypeByte) }

    /// Needs the whole header; any content, even none, is the frame's (the per-type decoders judge it).
    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> PMDDataFrame {
        var reader = ByteReader(bytes)
        let type = try reader.readUInt8()
        let timestamp = try reader.read(UInt64.self)
        let frameTypeByte = try reader.readUInt8()
        return PMDDataFrame(measurementTypeByte: type, timestamp: timestamp, frameType: frameTypeByte & 0x7F,
                            isCompressed: frameTypeByte & 0x80 != 0, content: Array(try reader.readBytes(reader.remainingCount)))
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(measurementTypeByte)
        writer.write(timestamp)
        writer.write(frameType | (isCompressed ? 0x80 : 0))
        writer.write(contentsOf: content)
        return writer.bytes
    }

    /// Refuses a frame whose type, frame type or compression the caller's decoder does not know.
    func unsupported() -> GATTCodecError {
        .unknownIdentifier(field: "PMD \(measurementType.map { "\($0)" } ?? "type \(measurementTypeByte)") "
                           + "\(isCompressed ? "compressed" : "raw") frame type", value: Int(frameType))
    }
}
