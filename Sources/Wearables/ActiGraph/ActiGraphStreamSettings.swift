/// Which IMU sensors stream on the IMU Stream characteristic: the `SET_STREAMS` mask byte. Bits 4–7 are
/// reserved; the decoder refuses them rather than carry bits no one can name.
public struct ActiGraphIMUMask: OptionSet, Sendable, Hashable {
    public static let accelerometer = ActiGraphIMUMask(rawValue: 1 << 0)
    public static let gyroscope = ActiGraphIMUMask(rawValue: 1 << 1)
    public static let magnetometer = ActiGraphIMUMask(rawValue: 1 << 2)
    public static let temperature = ActiGraphIMUMask(rawValue: 1 << 3)
    public static let all: ActiGraphIMUMask = [.accelerometer, .gyroscope, .magnetometer, .temperature]

    public var rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The sensor's bit.
    public init(_ sensor: ActiGraphIMUSensor) {
        self.init(rawValue: 1 << (sensor.rawValue - 1))
    }
}

extension ByteReader {
    package mutating func readIMUMask() throws(GATTCodecError) -> ActiGraphIMUMask {
        let raw = try readUInt8()
        guard raw & ~ActiGraphIMUMask.all.rawValue == 0 else { throw .reservedValue(field: "IMU mask", value: Int(raw)) }
        return ActiGraphIMUMask(rawValue: raw)
    }

    package mutating func readRawRate() throws(GATTCodecError) -> UInt8 {
        let rate = try readUInt8()
        guard ActiGraphStreamSettings.rawRates.contains(rate) else { throw .outOfRange(field: "raw rate", value: Int(rate)) }
        return rate
    }
}

/// The streams a Link runs: the `SET_STREAMS` request and its answer, and bytes 2–4 of `STATUS` — raw streaming
/// u8 (0/1), raw rate u8 (30–100 Hz), IMU mask u8. Three bytes.
public struct ActiGraphStreamSettings: Sendable, Equatable, ByteLayout {
    public static let length = 3
    /// The raw accelerometer rates a Link runs, in Hz.
    public static let rawRates: ClosedRange<UInt8> = 30...100

    public var rawStreaming: Bool
    /// 30…100 Hz; the decoder refuses others, the encoder writes what it is given.
    public var rawRateHz: UInt8
    public var imu: ActiGraphIMUMask

    public init(rawStreaming: Bool, rawRateHz: UInt8, imu: ActiGraphIMUMask) {
        self.rawStreaming = rawStreaming
        self.rawRateHz = rawRateHz
        self.imu = imu
    }

    public init(decoding bytes: [UInt8]) throws(GATTCodecError) { try self.init(whole: bytes) }

    package init(reading reader: inout ByteReader) throws(GATTCodecError) {
        self.init(rawStreaming: try reader.readFlag(field: "raw streaming"), rawRateHz: try reader.readRawRate(),
                  imu: try reader.readIMUMask())
    }

    public func encoded() -> [UInt8] { wholeBytes }

    package func write(to writer: inout ByteWriter) {
        writer.write(rawStreaming)
        writer.write(rawRateHz)
        writer.write(imu.rawValue)
    }
}

/// The data of a `STATUS` answer (after the status byte): battery u8 (%), wear u8 (0/1), the stream settings
/// (3 bytes), first epoch u32, last epoch u32, epoch count u32, device time u32 — 21 bytes. Times are Unix
/// seconds of the Link's clock.
public struct ActiGraphDeviceStatus: Sendable, Equatable, ByteLayout {
    public static let length = 21

    /// 0…100 %.
    public var batteryPercent: UInt8
    public var isWorn: Bool
    public var streams: ActiGraphStreamSettings
    /// The start of the oldest stored epoch.
    public var firstEpoch: UInt32
    /// The start of the newest stored epoch.
    public var lastEpoch: UInt32
    public var epochCount: UInt32
    public var deviceTime: UInt32

    public init(batteryPercent: UInt8, isWorn: Bool, streams: ActiGraphStreamSettings, firstEpoch: UInt32,
                lastEpoch: UInt32, epochCount: UInt32, deviceTime: UInt32) {
        self.batteryPercent = batteryPercent
        self.isWorn = isWorn
        self.streams = streams
        self.firstEpoch = firstEpoch
        self.lastEpoch = lastEpoch
        self.epochCount = epochCount
        self.deviceTime = deviceTime
    }

    public init(decoding bytes: [UInt8]) throws(GATTCodecError) { try self.init(whole: bytes) }

    package init(reading reader: inout ByteReader) throws(GATTCodecError) {
        batteryPercent = try reader.readUInt8()
        guard batteryPercent <= 100 else { throw .outOfRange(field: "battery", value: Int(batteryPercent)) }
        isWorn = try reader.readFlag(field: "wear")
        streams = try ActiGraphStreamSettings(reading: &reader)
        firstEpoch = try reader.read(UInt32.self)
        lastEpoch = try reader.read(UInt32.self)
        epochCount = try reader.read(UInt32.self)
        deviceTime = try reader.read(UInt32.self)
    }

    public func encoded() -> [UInt8] { wholeBytes }

    package func write(to writer: inout ByteWriter) {
        writer.write(batteryPercent)
        writer.write(isWorn)
        streams.write(to: &writer)
        writer.write(firstEpoch)
        writer.write(lastEpoch)
        writer.write(epochCount)
        writer.write(deviceTime)
    }
}

extension ActiGraphStreamSettings {
    /// The whole stream configuration as a `configure` request that sets it again: the SDK's `raw` and `imu`
    /// sections (all four sensors) and the raw rate as the contract's `sensors.accelerometer.rate_hz`. The
    /// gateway keeps it and the driver applies it on every connection.
    public var configurationObject: [String: DeviceValue] {
        var imu: [String: DeviceValue] = [:]
        for sensor in ActiGraphIMUSensor.allCases { imu[sensor.name] = .flag(self.imu.contains(.init(sensor))) }
        return [
            "raw": .object(["stream": .flag(rawStreaming)]),
            "imu": .object(imu),
            "sensors": .object(["accelerometer": .object(["rate_hz": .integer(Int64(rawRateHz))])]),
        ]
    }

    /// The state's `sensors`: each IMU sensor's switch, and the accelerometer's raw stream with its rate (the
    /// raw stream and the IMU accelerometer both publish on `sensor/accelerometer`).
    public var sensorsState: [String: DeviceValue] {
        var sensors: [String: DeviceValue] = [:]
        for sensor in ActiGraphIMUSensor.allCases {
            sensors[sensor.name] = .object(["enabled": .flag(imu.contains(.init(sensor)))])
        }
        sensors["accelerometer"] = .object([
            "enabled": .flag(rawStreaming || imu.contains(.accelerometer)),
            "raw_stream": .flag(rawStreaming),
            "rate_hz": .integer(Int64(rawRateHz)),
            "imu": .flag(imu.contains(.accelerometer)),
        ])
        return sensors
    }
}

extension ActiGraphStreamSettings {
    /// Nothing streaming at the top rate: what the driver assumes before the Link's STATUS says otherwise.
    public static let off = ActiGraphStreamSettings(rawStreaming: false, rawRateHz: rawRates.upperBound, imu: [])
}
