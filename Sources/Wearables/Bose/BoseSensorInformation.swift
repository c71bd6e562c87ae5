/// `SensorInformation` (read): for each sensor its raw and scaled ranges, the periods it offers and the length
/// of its samples. The driver needs it before it can frame or scale a single `SensorData` record.
public struct BoseSensorInformation: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        /// The wire id; ids this code does not know are kept so framing can skip their records.
        public var sensorID: UInt8
        public var minimumScaled: Int16
        public var maximumScaled: Int16
        public var minimumRaw: Int16
        public var maximumRaw: Int16
        /// Bit 0 = 320 ms … bit 4 = 20 ms.
        public var availablePeriodsMask: UInt16
        /// Payload bytes per record, after the id and timestamp.
        public var sampleLength: UInt8

        public init(sensorID: UInt8, minimumScaled: Int16, maximumScaled: Int16, minimumRaw: Int16, maximumRaw: Int16,
                    availablePeriodsMask: UInt16, sampleLength: UInt8) {
            self.sensorID = sensorID
            self.minimumScaled = minimumScaled
            self.maximumScaled = maximumScaled
            self.minimumRaw = minimumRaw
            self.maximumRaw = maximumRaw
            self.availablePeriodsMask = availablePeriodsMask
            self.sampleLength = sampleLength
        }

        public var sensor: BoseSensor? { BoseSensor(rawValue: sensorID) }
        public var availablePeriods: [BoseSamplePeriod] { BoseSamplePeriod.periods(inMask: availablePeriodsMask) }

        /// value = (raw − minRaw) × (maxScaled − minScaled) / (maxRaw − minRaw) + minScaled, the SDK's formula.
        public func scale(_ raw: Int16) -> Double {
            let rawSpan = Double(maximumRaw) - Double(minimumRaw)
            let scaledSpan = Double(maximumScaled) - Double(minimumScaled)
            return (Double(raw) - Double(minimumRaw)) * scaledSpan / rawSpan + Double(minimumScaled)
        }
    }

    public var entries: [Entry]
    /// What decoding left out, in wire order; empty for a value built from entries.
    public var ignored: [Ignored]

    /// A part of the characteristic's value that is not in `entries`, kept so the driver can report it.
    public enum Ignored: Sendable, Equatable {
        /// A whole entry whose minimum exceeds its maximum (scaled or raw range): the SDK drops it.
        case invertedRange(sensorID: UInt8)
        /// 1–11 bytes after the last whole entry: the SDK ignores them.
        case partialEntry(byteCount: Int)
    }

    public static let entryLength = 12

    public init(entries: [Entry]) {
        self.entries = entries
        ignored = []
    }

    public func entry(for sensorID: UInt8) -> Entry? { entries.first { $0.sensorID == sensorID } }
    public func entry(for sensor: BoseSensor) -> Entry? { entry(for: sensor.rawValue) }

    /// Decodes as tolerantly as Bose's SDK (`SensorInformation.swift`, `SensorInformation.init?(payload:)` and
    /// `Entry.init?(payload:)`, in the BoseWearable iOS SDK vendored by `umarqattan/Vudu` under
    /// `Pods/BoseWearable/Modules/BoseWearable/Source/WearableSensorService/`): it reads whole 12-byte entries
    /// only (`while offset + length <= data.count`), so a partial trailing entry is ignored, and it drops an
    /// entry whose minimum exceeds its maximum (`minScaled <= maxScaled`, `minRaw <= maxRaw` in the entry's
    /// guard) and keeps the rest. Both land in `ignored`, and a sensor dropped so is unknown to the device's
    /// records, as it is to the SDK.
    ///
    /// Still refused, because the SDK would then compute with them and we would publish garbage: an entry whose
    /// raw range is empty (`outOfRange`: scaling would divide by zero — the SDK's scale factor becomes infinite)
    /// and a known sensor whose sample length is shorter than its record layout (`outOfRange`: none of its
    /// records could be decoded — the SDK fails every one of them).
    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> BoseSensorInformation {
        var reader = ByteReader(bytes)
        var information = BoseSensorInformation(entries: [])
        while reader.remainingCount >= entryLength {
            let entry = Entry(
                sensorID: try reader.readUInt8(),
                minimumScaled: Int16(bitPattern: try reader.read(UInt16.self, byteOrder: .bigEndian)),
                maximumScaled: Int16(bitPattern: try reader.read(UInt16.self, byteOrder: .bigEndian)),
                minimumRaw: Int16(bitPattern: try reader.read(UInt16.self, byteOrder: .bigEndian)),
                maximumRaw: Int16(bitPattern: try reader.read(UInt16.self, byteOrder: .bigEndian)),
                availablePeriodsMask: try reader.read(UInt16.self, byteOrder: .bigEndian),
                sampleLength: try reader.readUInt8())
            guard entry.minimumScaled <= entry.maximumScaled, entry.minimumRaw <= entry.maximumRaw else {
                information.ignored.append(.invertedRange(sensorID: entry.sensorID))
                continue
            }
            guard entry.minimumRaw != entry.maximumRaw else {
                throw .outOfRange(field: "sensor \(entry.sensorID) raw range", value: Int(entry.minimumRaw))
            }
            if let sensor = entry.sensor, Int(entry.sampleLength) < sensor.payloadLength {
                throw .outOfRange(field: "sensor \(entry.sensorID) sample length", value: Int(entry.sampleLength))
            }
            information.entries.append(entry)
        }
        if !reader.isAtEnd { information.ignored.append(.partialEntry(byteCount: reader.remainingCount)) }
        return information
    }

    /// The entries only: what decoding ignored is not written back.
    public func encode() -> [UInt8] {
        var writer = ByteWriter()
        for entry in entries {
            writer.write(entry.sensorID)
            writer.write(UInt16(bitPattern: entry.minimumScaled), byteOrder: .bigEndian)
            writer.write(UInt16(bitPattern: entry.maximumScaled), byteOrder: .bigEndian)
            writer.write(UInt16(bitPattern: entry.minimumRaw), byteOrder: .bigEndian)
            writer.write(UInt16(bitPattern: entry.maximumRaw), byteOrder: .bigEndian)
            writer.write(entry.availablePeriodsMask, byteOrder: .bigEndian)
            writer.write(entry.sampleLength)
        }
        return writer.bytes
    }
}
