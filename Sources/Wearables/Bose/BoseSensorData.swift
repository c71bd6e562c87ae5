/// One record of a `SensorData` notification, with the wire integers kept so encoding gives back the bytes.
public struct BoseSensorRecord: Sendable, Equatable {
    public enum Payload: Sendable, Equatable {
        /// Accelerometer, gyroscope, orientation, magnetometer; accuracy 0 unreliable … 3 high.
        case vector(x: Int16, y: Int16, z: Int16, accuracy: UInt8)
        /// Rotation (with an accuracy, scaled like the components) and game rotation (without).
        case quaternion(x: Int16, y: Int16, z: Int16, w: Int16, accuracy: Int16?)
        /// Uncalibrated magnetometer: the field and the bias the device estimated.
        case uncalibratedVector(x: Int16, y: Int16, z: Int16, biasX: Int16, biasY: Int16, biasZ: Int16)
    }

    public var sensor: BoseSensor
    /// Milliseconds on the device's clock; wraps every 65.536 s (`BoseTimestampClock` unwraps it).
    public var timestamp: UInt16
    public var payload: Payload

    public init(sensor: BoseSensor, timestamp: UInt16, payload: Payload) {
        self.sensor = sensor
        self.timestamp = timestamp
        self.payload = payload
    }

    /// The record in the contract's units, scaled with the sensor's entry of `SensorInformation`.
    public func reading(scaledWith entry: BoseSensorInformation.Entry) -> SensorReading {
        let scale = entry.scale
        switch payload {
        case .vector(let x, let y, let z, let accuracy):
            return .vector(x: scale(x), y: scale(y), z: scale(z), accuracy: Self.accuracy(accuracy))
        case .quaternion(let x, let y, let z, let w, let accuracy):
            return .quaternion(x: scale(x), y: scale(y), z: scale(z), w: scale(w), accuracy: accuracy.map(scale))
        case .uncalibratedVector(let x, let y, let z, let biasX, let biasY, let biasZ):
            return .uncalibratedVector(x: scale(x), y: scale(y), z: scale(z),
                                       biasX: scale(biasX), biasY: scale(biasY), biasZ: scale(biasZ))
        }
    }

    /// The SDK's `VectorAccuracy`; a value it does not define is left out rather than guessed.
    static func accuracy(_ raw: UInt8) -> SensorAccuracy? {
        switch raw {
        case 0: .unreliable
        case 1: .low
        case 2: .medium
        case 3: .high
        default: nil
        }
    }
}

/// `SensorData` (notify): records `[sensor id u8][timestamp u16 BE][sampleLength bytes]`, concatenated. The
/// sample length comes from `SensorInformation`, so a notification cannot be framed without it.
public enum BoseSensorData {
    /// The records of one notification up to the first that could not be framed, and why it could not.
    public struct Records: Sendable, Equatable {
        /// Every record before `problem`, in wire order (all of them when it is nil).
        public var records: [BoseSensorRecord]
        /// Why the rest of the notification was left: an id `SensorInformation` does not list
        /// (`unknownIdentifier`) or a record cut short (`truncated`, offsets in the whole notification); nil when
        /// every byte was framed.
        public var problem: GATTCodecError?

        public init(records: [BoseSensorRecord], problem: GATTCodecError? = nil) {
            self.records = records
            self.problem = problem
        }
    }

    /// Decodes as Bose's SDK does (`SensorValue.swift`, `SensorValue.parse(payload:metadata:)`, in the BoseWearable
    /// iOS SDK vendored by `umarqattan/Vudu` under `Pods/BoseWearable/Modules/BoseWearable/Source/SensorData/`):
    /// record by record, and when one cannot be framed — its id has no sample length in `SensorInformation`, or
    /// the notification ends inside it — it stops there and keeps the records before it (the SDK's guard ends in
    /// `break`, not in a failure of the whole notification). After such a record the framing of the rest is
    /// unknowable, so nothing after it is guessed at. An id `SensorInformation` lists but this code does not know
    /// (a newer sensor) is skipped by its sample length, as the SDK skips a record it cannot parse.
    public static func decodeRecords(_ bytes: [UInt8], information: BoseSensorInformation) -> Records {
        var reader = ByteReader(bytes)
        var records: [BoseSensorRecord] = []
        while !reader.isAtEnd {
            do throws(GATTCodecError) {
                if let record = try decodeRecord(&reader, information: information) { records.append(record) }
            } catch {
                return Records(records: records, problem: error)
            }
        }
        return Records(records: records)
    }

    /// The whole notification or the problem of its first unframeable record: for callers that must not act on
    /// part of a notification (the simulator's own checks, tests). The driver uses `decodeRecords`.
    public static func decode(_ bytes: [UInt8], information: BoseSensorInformation) throws(GATTCodecError) -> [BoseSensorRecord] {
        let decoded = decodeRecords(bytes, information: information)
        if let problem = decoded.problem { throw problem }
        return decoded.records
    }

    /// The next record, nil for a listed sensor this code does not know (skipped by its sample length).
    private static func decodeRecord(_ reader: inout ByteReader, information: BoseSensorInformation)
        throws(GATTCodecError) -> BoseSensorRecord?
    {
        let id = try reader.readUInt8()
        guard let entry = information.entry(for: id) else { throw .unknownIdentifier(field: "sensor id", value: Int(id)) }
        let timestamp = try reader.read(UInt16.self, byteOrder: .bigEndian)
        let start = reader.offset
        var payload = ByteReader(Array(try reader.readBytes(Int(entry.sampleLength))))
        guard let sensor = entry.sensor else { return nil }
        do {
            return BoseSensorRecord(sensor: sensor, timestamp: timestamp, payload: try decodePayload(of: sensor, &payload))
        } catch {
            // `SensorInformation.decode` refuses sample lengths shorter than the layout, so this is only reached
            // with hand-built information; report the offset in the whole notification.
            throw .truncated(expected: start + sensor.payloadLength, actual: start + Int(entry.sampleLength))
        }
    }

    private static func decodePayload(of sensor: BoseSensor, _ reader: inout ByteReader) throws(GATTCodecError) -> BoseSensorRecord.Payload {
        func int16() throws(GATTCodecError) -> Int16 { Int16(bitPattern: try reader.read(UInt16.self, byteOrder: .bigEndian)) }
        switch sensor {
        case .accelerometer, .gyroscope, .orientation, .magnetometer:
            return .vector(x: try int16(), y: try int16(), z: try int16(), accuracy: try reader.readUInt8())
        case .rotation:
            return .quaternion(x: try int16(), y: try int16(), z: try int16(), w: try int16(), accuracy: try int16())
        case .gameRotation:
            return .quaternion(x: try int16(), y: try int16(), z: try int16(), w: try int16(), accuracy: nil)
        case .uncalibratedMagnetometer:
            return .uncalibratedVector(x: try int16(), y: try int16(), z: try int16(),
                                       biasX: try int16(), biasY: try int16(), biasZ: try int16())
        }
    }

    /// The notification a device sends for `records`, each payload padded to its sensor's sample length.
    public static func encode(_ records: [BoseSensorRecord], information: BoseSensorInformation) -> [UInt8] {
        var writer = ByteWriter()
        for record in records {
            writer.write(record.sensor.rawValue)
            writer.write(record.timestamp, byteOrder: .bigEndian)
            let start = writer.bytes.count
            func int16(_ value: Int16) { writer.write(UInt16(bitPattern: value), byteOrder: .bigEndian) }
            switch record.payload {
            case .vector(let x, let y, let z, let accuracy):
                [x, y, z].forEach(int16)
                writer.write(accuracy)
            case .quaternion(let x, let y, let z, let w, let accuracy):
                [x, y, z, w].forEach(int16)
                if let accuracy { int16(accuracy) }
            case .uncalibratedVector(let x, let y, let z, let biasX, let biasY, let biasZ):
                [x, y, z, biasX, biasY, biasZ].forEach(int16)
            }
            let length = Int(information.entry(for: record.sensor)?.sampleLength ?? UInt8(record.sensor.payloadLength))
            let padding = length - (writer.bytes.count - start)
            if padding > 0 { writer.write(contentsOf: repeatElement(0, count: padding)) }
        }
        return writer.bytes
    }
}

/// `GestureData` (notify): `[gesture id u8][timestamp u16 BE]` per gesture.
public struct BoseGestureEvent: Sendable, Equatable {
    public var gesture: BoseGesture
    public var timestamp: UInt16

    public init(gesture: BoseGesture, timestamp: UInt16) {
        self.gesture = gesture
        self.timestamp = timestamp
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> [BoseGestureEvent] {
        var reader = ByteReader(bytes)
        var events: [BoseGestureEvent] = []
        while !reader.isAtEnd {
            let id = try reader.readUInt8()
            let timestamp = try reader.read(UInt16.self, byteOrder: .bigEndian)
            guard let gesture = BoseGesture(rawValue: id) else { throw .unknownIdentifier(field: "gesture id", value: Int(id)) }
            events.append(BoseGestureEvent(gesture: gesture, timestamp: timestamp))
        }
        return events
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(gesture.rawValue)
        writer.write(timestamp, byteOrder: .bigEndian)
        return writer.bytes
    }
}

/// Turns the device's 16-bit millisecond timestamps, which wrap every 65.536 s, into Unix milliseconds.
///
/// The first timestamp of a connection is anchored to the gateway's clock; later ones advance by their signed
/// difference to the previous one, so a wrap is a small step forward and records of two sensors slightly out
/// of order step back a little instead of jumping 65 s. When the unwrapped time strays more than `tolerance`
/// from the gateway's clock (the device clock restarted, a long gap) it is anchored again. Pure: the caller
/// passes "now".
public struct BoseTimestampClock: Sendable, Equatable {
    private var anchor: Int64?
    private var unwrapped: Int64 = 0
    private var previous: UInt16 = 0
    /// How far ahead of the gateway's clock the device may run before it is re-anchored: small, because a
    /// sample cannot come from the future. Behind is allowed more (notifications queue in the controller).
    public let aheadTolerance: Int64
    public let behindTolerance: Int64

    public init(aheadTolerance: Int64 = 1_000, behindTolerance: Int64 = 5_000) {
        self.aheadTolerance = aheadTolerance
        self.behindTolerance = behindTolerance
    }

    public mutating func unixMilliseconds(for deviceTimestamp: UInt16, now: Int64) -> Int64 {
        if let anchor {
            unwrapped += Int64(Int16(bitPattern: deviceTimestamp &- previous))
            previous = deviceTimestamp
            let time = anchor + unwrapped
            if time <= now + aheadTolerance && time >= now - behindTolerance { return time }
        }
        anchor = now - Int64(deviceTimestamp)
        unwrapped = Int64(deviceTimestamp)
        previous = deviceTimestamp
        return now
    }

    /// Forgets the anchor: the next timestamp starts afresh (a new connection).
    public mutating func reset() { anchor = nil }
}
