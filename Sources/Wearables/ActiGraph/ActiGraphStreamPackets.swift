/// One x, y, z reading as the Link sends it: signed 16-bit, in the sensor's own step (1/4096 g, 1/16.4 °/s,
/// 0.15 µT).
public struct ActiGraphAxes: Sendable, Equatable {
    public var x: Int16
    public var y: Int16
    public var z: Int16

    public init(x: Int16, y: Int16, z: Int16) {
        self.x = x
        self.y = y
        self.z = z
    }

    package init(reading reader: inout ByteReader) throws(GATTCodecError) {
        self.init(x: try reader.readInt16(), y: try reader.readInt16(), z: try reader.readInt16())
    }

    package func write(to writer: inout ByteWriter) {
        writer.write(x)
        writer.write(y)
        writer.write(z)
    }
}

/// The time fields both stream packets share: first sample u32 s + u16 ms (0…999), rate u8 (Hz). Sample `i` is
/// at the first sample's time + i × 1000 / rate ms, rounded to the nearest millisecond.
package struct ActiGraphSampleClock: Sendable, Equatable {
    package var seconds: UInt32
    package var milliseconds: UInt16
    package var rateHz: UInt8

    package init(seconds: UInt32, milliseconds: UInt16, rateHz: UInt8) {
        self.seconds = seconds
        self.milliseconds = milliseconds
        self.rateHz = rateHz
    }

    package init(reading reader: inout ByteReader, rates: ClosedRange<UInt8>) throws(GATTCodecError) {
        seconds = try reader.read(UInt32.self)
        milliseconds = try reader.read(UInt16.self)
        guard milliseconds <= 999 else { throw .outOfRange(field: "first sample milliseconds", value: Int(milliseconds)) }
        rateHz = try reader.readUInt8()
        guard rates.contains(rateHz) else { throw .outOfRange(field: "rate", value: Int(rateHz)) }
    }

    package func write(to writer: inout ByteWriter) {
        writer.write(seconds)
        writer.write(milliseconds)
        writer.write(rateHz)
    }

    /// Unix ms of sample `index`; a rate of 0 (which the decoder refuses) is taken as 1 Hz.
    package func time(ofSample index: Int) -> Int64 {
        let rate = Int64(max(rateHz, 1))
        let offset = (Int64(index) * 2000 + rate) / (2 * rate)
        return Int64(seconds) * 1000 + Int64(milliseconds) + offset
    }
}

/// One raw acceleration sample in the SDK's terms: g on each axis, Unix ms.
public struct ActiGraphAcceleration: Sendable, Equatable {
    public var timestamp: Int64
    public var x: Double
    public var y: Double
    public var z: Double

    public init(timestamp: Int64, x: Double, y: Double, z: Double) {
        self.timestamp = timestamp
        self.x = x
        self.y = y
        self.z = z
    }
}

/// One Raw Stream notification: sequence u16, first sample time u32 s + u16 ms, rate u8 (30–100 Hz), count u8
/// (at most 40), then `count` samples of x, y, z i16 in 1/4096 g. Unframed: the notification is the packet,
/// so bytes after the samples are `truncated` like in every other layout here.
public struct ActiGraphRawPacket: Sendable, Equatable, ByteLayout {
    public static let maximumSamples = 40
    /// Raw counts per g.
    public static let countsPerG = 4096.0

    /// Per connection, wraps; a gap is lost samples.
    public var sequence: UInt16
    public var firstSampleSeconds: UInt32
    /// 0…999.
    public var firstSampleMilliseconds: UInt16
    /// 30…100 Hz.
    public var rateHz: UInt8
    /// At most `maximumSamples`; the decoder refuses more, the encoder writes what it is given.
    public var samples: [ActiGraphAxes]

    public init(sequence: UInt16, firstSampleSeconds: UInt32, firstSampleMilliseconds: UInt16, rateHz: UInt8,
                samples: [ActiGraphAxes]) {
        self.sequence = sequence
        self.firstSampleSeconds = firstSampleSeconds
        self.firstSampleMilliseconds = firstSampleMilliseconds
        self.rateHz = rateHz
        self.samples = samples
    }

    public init(decoding bytes: [UInt8]) throws(GATTCodecError) { try self.init(whole: bytes) }

    package init(reading reader: inout ByteReader) throws(GATTCodecError) {
        sequence = try reader.read(UInt16.self)
        let clock = try ActiGraphSampleClock(reading: &reader, rates: ActiGraphStreamSettings.rawRates)
        firstSampleSeconds = clock.seconds
        firstSampleMilliseconds = clock.milliseconds
        rateHz = clock.rateHz
        let count = Int(try reader.readUInt8())
        guard count <= Self.maximumSamples else { throw .outOfRange(field: "sample count", value: count) }
        var samples: [ActiGraphAxes] = []
        samples.reserveCapacity(count)
        for _ in 0..<count { samples.append(try ActiGraphAxes(reading: &reader)) }
        self.samples = samples
    }

    public func encoded() -> [UInt8] { wholeBytes }

    /// Traps past 255 samples, which the count byte cannot say: a bug of the caller.
    package func write(to writer: inout ByteWriter) {
        precondition(samples.count <= Int(UInt8.max), "an ActiGraph raw packet of \(samples.count) samples cannot be encoded")
        writer.write(sequence)
        clock.write(to: &writer)
        writer.write(UInt8(samples.count))
        for sample in samples { sample.write(to: &writer) }
    }

    package var clock: ActiGraphSampleClock {
        ActiGraphSampleClock(seconds: firstSampleSeconds, milliseconds: firstSampleMilliseconds, rateHz: rateHz)
    }

    /// The samples in g with their Unix ms times.
    public var accelerations: [ActiGraphAcceleration] {
        let clock = clock
        return samples.enumerated().map { index, sample in
            ActiGraphAcceleration(timestamp: clock.time(ofSample: index), x: Double(sample.x) / Self.countsPerG,
                                  y: Double(sample.y) / Self.countsPerG, z: Double(sample.z) / Self.countsPerG)
        }
    }
}

/// The sensor an IMU packet comes from: its first byte.
public enum ActiGraphIMUSensor: UInt8, Sendable, CaseIterable {
    case accelerometer = 1
    case gyroscope
    case magnetometer
    case temperature

    /// The contract's sensor name, as in `sensor/<name>` and `imu.<name>`.
    public var name: String {
        switch self {
        case .accelerometer: "accelerometer"
        case .gyroscope: "gyroscope"
        case .magnetometer: "magnetometer"
        case .temperature: "temperature"
        }
    }

    /// Values per sample: x, y, z, or one temperature.
    public var valuesPerSample: Int { self == .temperature ? 1 : 3 }

    /// The size of one raw step in `unit`.
    public var scale: Double {
        switch self {
        case .accelerometer: 1 / 4096
        case .gyroscope: 1 / 16.4
        case .magnetometer: 0.15
        case .temperature: 0.01
        }
    }

    /// g, °/s, µT, °C.
    public var unit: String {
        switch self {
        case .accelerometer: "g"
        case .gyroscope: "°/s"
        case .magnetometer: "µT"
        case .temperature: "°C"
        }
    }
}

/// One IMU sample in the sensor's `unit`: `values` is x, y, z, or the one temperature.
public struct ActiGraphIMUMeasurement: Sendable, Equatable {
    public var timestamp: Int64
    public var values: [Double]

    public init(timestamp: Int64, values: [Double]) {
        self.timestamp = timestamp
        self.values = values
    }
}

/// One IMU Stream notification: sensor u8 (1–4), sequence u16, first sample time u32 s + u16 ms, rate u8
/// (at least 1 Hz), count u8, then `count` samples — i16 × 3 for accelerometer, gyroscope and magnetometer,
/// one i16 for temperature. `rawSamples` holds each sample's i16 values as sent.
public struct ActiGraphIMUPacket: Sendable, Equatable, ByteLayout {
    public var sensor: ActiGraphIMUSensor
    public var sequence: UInt16
    public var firstSampleSeconds: UInt32
    /// 0…999.
    public var firstSampleMilliseconds: UInt16
    public var rateHz: UInt8
    /// Each entry has `sensor.valuesPerSample` values; the encoder traps otherwise (a bug of the caller).
    public var rawSamples: [[Int16]]

    public init(sensor: ActiGraphIMUSensor, sequence: UInt16, firstSampleSeconds: UInt32,
                firstSampleMilliseconds: UInt16, rateHz: UInt8, rawSamples: [[Int16]]) {
        self.sensor = sensor
        self.sequence = sequence
        self.firstSampleSeconds = firstSampleSeconds
        self.firstSampleMilliseconds = firstSampleMilliseconds
        self.rateHz = rateHz
        self.rawSamples = rawSamples
    }

    public init(decoding bytes: [UInt8]) throws(GATTCodecError) { try self.init(whole: bytes) }

    package init(reading reader: inout ByteReader) throws(GATTCodecError) {
        let rawSensor = try reader.readUInt8()
        guard let sensor = ActiGraphIMUSensor(rawValue: rawSensor) else {
            throw .unknownIdentifier(field: "IMU sensor", value: Int(rawSensor))
        }
        self.sensor = sensor
        sequence = try reader.read(UInt16.self)
        let clock = try ActiGraphSampleClock(reading: &reader, rates: 1...UInt8.max)
        firstSampleSeconds = clock.seconds
        firstSampleMilliseconds = clock.milliseconds
        rateHz = clock.rateHz
        let count = Int(try reader.readUInt8())
        var samples: [[Int16]] = []
        samples.reserveCapacity(count)
        for _ in 0..<count {
            var values: [Int16] = []
            for _ in 0..<sensor.valuesPerSample { values.append(try reader.readInt16()) }
            samples.append(values)
        }
        rawSamples = samples
    }

    public func encoded() -> [UInt8] { wholeBytes }

    package func write(to writer: inout ByteWriter) {
        precondition(rawSamples.count <= Int(UInt8.max), "an ActiGraph IMU packet of \(rawSamples.count) samples cannot be encoded")
        precondition(rawSamples.allSatisfy { $0.count == sensor.valuesPerSample },
                     "every \(sensor.name) sample has \(sensor.valuesPerSample) values")
        writer.write(sensor.rawValue)
        writer.write(sequence)
        ActiGraphSampleClock(seconds: firstSampleSeconds, milliseconds: firstSampleMilliseconds, rateHz: rateHz)
            .write(to: &writer)
        writer.write(UInt8(rawSamples.count))
        for sample in rawSamples {
            for value in sample { writer.write(value) }
        }
    }

    /// The samples in `sensor.unit` with their Unix ms times.
    public var measurements: [ActiGraphIMUMeasurement] {
        let clock = ActiGraphSampleClock(seconds: firstSampleSeconds, milliseconds: firstSampleMilliseconds, rateHz: rateHz)
        let scale = sensor.scale
        return rawSamples.enumerated().map { index, sample in
            ActiGraphIMUMeasurement(timestamp: clock.time(ofSample: index), values: sample.map { Double($0) * scale })
        }
    }
}
