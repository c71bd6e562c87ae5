/// The `EPOCH_OPEN` request: the epochs with start ≤ ts ≤ stop, Unix seconds — start u32, stop u32. The codec
/// does not order them: a start after stop is for the Link to refuse (status 0x88), and for
/// `ActiGraphConfigurationRequest` to refuse before asking.
public struct ActiGraphEpochRange: Sendable, Equatable, ByteLayout {
    public static let length = 8

    public var start: UInt32
    public var stop: UInt32

    public init(start: UInt32, stop: UInt32) {
        self.start = start
        self.stop = stop
    }

    public init(decoding bytes: [UInt8]) throws(GATTCodecError) { try self.init(whole: bytes) }

    package init(reading reader: inout ByteReader) throws(GATTCodecError) {
        self.init(start: try reader.read(UInt32.self), stop: try reader.read(UInt32.self))
    }

    public func encoded() -> [UInt8] { wholeBytes }

    package func write(to writer: inout ByteWriter) {
        writer.write(start)
        writer.write(stop)
    }
}

/// The data of an `EPOCH_OPEN` answer: epoch count u32, page count u16.
public struct ActiGraphEpochOpened: Sendable, Equatable, ByteLayout {
    public static let length = 6

    public var epochCount: UInt32
    public var pageCount: UInt16

    public init(epochCount: UInt32, pageCount: UInt16) {
        self.epochCount = epochCount
        self.pageCount = pageCount
    }

    public init(decoding bytes: [UInt8]) throws(GATTCodecError) { try self.init(whole: bytes) }

    package init(reading reader: inout ByteReader) throws(GATTCodecError) {
        self.init(epochCount: try reader.read(UInt32.self), pageCount: try reader.read(UInt16.self))
    }

    public func encoded() -> [UInt8] { wholeBytes }

    package func write(to writer: inout ByteWriter) {
        writer.write(epochCount)
        writer.write(pageCount)
    }
}

/// One 60-second epoch, the SDK's `epochData`: ts u32 (start of the minute), x, y, z counts u16, steps u16,
/// heart rate u8 (0 = none), wear u8 (0/1) — 14 bytes. docs/protocols/actigraph.md says "13 bytes", which
/// miscounts its own field list (4 + 3 × 2 + 2 + 1 + 1); the fields are what the SDK's `epochData` needs, so
/// they win.
public struct ActiGraphEpochRecord: Sendable, Equatable, ByteLayout {
    public static let length = 14

    public var timestamp: UInt32
    public var xCounts: UInt16
    public var yCounts: UInt16
    public var zCounts: UInt16
    public var steps: UInt16
    /// bpm; 0 when the Link measured none.
    public var heartRate: UInt8
    public var isWorn: Bool

    public init(timestamp: UInt32, xCounts: UInt16, yCounts: UInt16, zCounts: UInt16, steps: UInt16,
                heartRate: UInt8, isWorn: Bool) {
        self.timestamp = timestamp
        self.xCounts = xCounts
        self.yCounts = yCounts
        self.zCounts = zCounts
        self.steps = steps
        self.heartRate = heartRate
        self.isWorn = isWorn
    }

    public init(decoding bytes: [UInt8]) throws(GATTCodecError) { try self.init(whole: bytes) }

    package init(reading reader: inout ByteReader) throws(GATTCodecError) {
        self.init(timestamp: try reader.read(UInt32.self), xCounts: try reader.read(UInt16.self),
                  yCounts: try reader.read(UInt16.self), zCounts: try reader.read(UInt16.self),
                  steps: try reader.read(UInt16.self), heartRate: try reader.readUInt8(),
                  isWorn: try reader.readFlag(field: "wear"))
    }

    public func encoded() -> [UInt8] { wholeBytes }

    package func write(to writer: inout ByteWriter) {
        writer.write(timestamp)
        writer.write(xCounts)
        writer.write(yCounts)
        writer.write(zCounts)
        writer.write(steps)
        writer.write(heartRate)
        writer.write(isWorn)
    }

    /// The epoch on `fitness/epoch`: id `<serial>-epoch-<ts>` (ts in Unix seconds, stable across re-downloads),
    /// timestamp in Unix ms, `heart_rate` null when the Link measured none (every record has every key, so a
    /// pipeline reading them needs no special case, and 0 bpm is never claimed).
    public func fitnessRecord(serial: String) -> FitnessRecord {
        var fields: [String: DeviceValue] = [
            "x_counts": .integer(Int64(xCounts)),
            "y_counts": .integer(Int64(yCounts)),
            "z_counts": .integer(Int64(zCounts)),
            "steps": .integer(Int64(steps)),
            "wear": .flag(isWorn),
        ]
        fields["heart_rate"] = heartRate == 0 ? .null : .integer(Int64(heartRate))
        return FitnessRecord(kind: "epoch", id: "\(serial)-epoch-\(timestamp)", timestamp: Int64(timestamp) * 1000,
                             fields: fields)
    }
}

/// The data of an `EPOCH_PAGE` answer: page u16, count u8 (at most 60), then `count` 14-byte epoch records.
/// Records missing for the count are `truncated`; bytes after them are `truncated` too, with `expected` the
/// length the count accounts for.
public struct ActiGraphEpochPage: Sendable, Equatable, ByteLayout {
    public static let maximumRecords = 60

    public var page: UInt16
    /// At most `maximumRecords`; the decoder refuses more, the encoder writes what it is given.
    public var records: [ActiGraphEpochRecord]

    public init(page: UInt16, records: [ActiGraphEpochRecord]) {
        self.page = page
        self.records = records
    }

    public init(decoding bytes: [UInt8]) throws(GATTCodecError) { try self.init(whole: bytes) }

    package init(reading reader: inout ByteReader) throws(GATTCodecError) {
        page = try reader.read(UInt16.self)
        let count = Int(try reader.readUInt8())
        guard count <= Self.maximumRecords else { throw .outOfRange(field: "epoch count", value: count) }
        var records: [ActiGraphEpochRecord] = []
        records.reserveCapacity(count)
        for _ in 0..<count { records.append(try ActiGraphEpochRecord(reading: &reader)) }
        self.records = records
    }

    public func encoded() -> [UInt8] { wholeBytes }

    /// Traps past 255 records, which the count byte cannot say: a bug of the caller, not of the Link.
    package func write(to writer: inout ByteWriter) {
        precondition(records.count <= Int(UInt8.max), "an ActiGraph epoch page of \(records.count) records cannot be encoded")
        writer.write(page)
        writer.write(UInt8(records.count))
        for record in records { record.write(to: &writer) }
    }
}
