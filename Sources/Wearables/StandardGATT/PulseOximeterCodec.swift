/// An SpO2 reading and the pulse rate measured with it, both IEEE-11073 SFLOAT: SpO2 in percent, pulse rate in
/// beats per minute. Either may be a special value, typically NaN while the finger is out of the probe.
public struct SpO2PulseRate: Sendable, Equatable, Hashable {
    public let spo2: MedicalFloat16
    public let pulseRate: MedicalFloat16

    public init(spo2: MedicalFloat16, pulseRate: MedicalFloat16) {
        self.spo2 = spo2
        self.pulseRate = pulseRate
    }

    static func read(from reader: inout ByteReader) throws(GATTCodecError) -> SpO2PulseRate {
        SpO2PulseRate(
            spo2: MedicalFloat16(bits: try reader.read(UInt16.self)),
            pulseRate: MedicalFloat16(bits: try reader.read(UInt16.self)))
    }

    func write(to writer: inout ByteWriter) {
        writer.write(spo2.bits)
        writer.write(pulseRate.bits)
    }
}

/// The 24-bit Device and Sensor Status field of the PLX measurements; anything wider cannot be sent.
private func checkDeviceAndSensorStatus(_ status: UInt32?) throws(GATTCodecError) {
    if let status, status > 0xFF_FFFF {
        throw .outOfRange(field: "device and sensor status", value: Int(status))
    }
}

/// A PLX Spot-check Measurement (characteristic 0x2A5E; Pulse Oximeter Service 1.0, "PLX Spot-check
/// Measurement"), indicated once per completed spot check.
///
/// Layout, LE: flags u8, SpO2 SFLOAT, pulse rate SFLOAT, then per flags: bit 0 timestamp (Date Time, 7 bytes),
/// bit 1 measurement status u16, bit 2 device and sensor status u24, bit 3 pulse amplitude index SFLOAT.
/// Flags bit 4 says the device's clock is not set, so the timestamp means little. The status fields stay raw
/// bit fields: their meanings (the spec's tables "Measurement Status" and "Device and Sensor Status") are for
/// whoever presents them.
public struct PLXSpotCheckMeasurement: GATTCharacteristicValue {
    public static let characteristicUUID = GATTUUID.Characteristic.plxSpotCheckMeasurement

    public let reading: SpO2PulseRate
    public let timestamp: GATTDateTime?
    public let measurementStatus: UInt16?
    /// 24 bits.
    public let deviceAndSensorStatus: UInt32?
    /// Percent.
    public let pulseAmplitudeIndex: MedicalFloat16?
    public let deviceClockIsNotSet: Bool

    /// Throws `outOfRange` when `deviceAndSensorStatus` does not fit 24 bits.
    public init(
        reading: SpO2PulseRate, timestamp: GATTDateTime? = nil, measurementStatus: UInt16? = nil,
        deviceAndSensorStatus: UInt32? = nil, pulseAmplitudeIndex: MedicalFloat16? = nil,
        deviceClockIsNotSet: Bool = false
    ) throws(GATTCodecError) {
        try checkDeviceAndSensorStatus(deviceAndSensorStatus)
        self.reading = reading
        self.timestamp = timestamp
        self.measurementStatus = measurementStatus
        self.deviceAndSensorStatus = deviceAndSensorStatus
        self.pulseAmplitudeIndex = pulseAmplitudeIndex
        self.deviceClockIsNotSet = deviceClockIsNotSet
    }

    private enum Flag {
        static let timestamp: UInt8 = 0x01
        static let measurementStatus: UInt8 = 0x02
        static let deviceAndSensorStatus: UInt8 = 0x04
        static let pulseAmplitudeIndex: UInt8 = 0x08
        static let deviceClockIsNotSet: UInt8 = 0x10
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> PLXSpotCheckMeasurement {
        var reader = ByteReader(bytes)
        let flags = try reader.readUInt8()
        let reading = try SpO2PulseRate.read(from: &reader)
        let timestamp = flags & Flag.timestamp != 0 ? try GATTDateTime.read(from: &reader) : nil
        let measurementStatus = flags & Flag.measurementStatus != 0 ? try reader.read(UInt16.self) : nil
        let deviceStatus = flags & Flag.deviceAndSensorStatus != 0 ? try reader.readUInt24() : nil
        let amplitude = flags & Flag.pulseAmplitudeIndex != 0 ? MedicalFloat16(bits: try reader.read(UInt16.self)) : nil
        return try PLXSpotCheckMeasurement(
            reading: reading, timestamp: timestamp, measurementStatus: measurementStatus,
            deviceAndSensorStatus: deviceStatus, pulseAmplitudeIndex: amplitude,
            deviceClockIsNotSet: flags & Flag.deviceClockIsNotSet != 0
        )
    }

    public func encode() -> [UInt8] {
        var flags: UInt8 = 0
        if timestamp != nil { flags |= Flag.timestamp }
        if measurementStatus != nil { flags |= Flag.measurementStatus }
        if deviceAndSensorStatus != nil { flags |= Flag.deviceAndSensorStatus }
        if pulseAmplitudeIndex != nil { flags |= Flag.pulseAmplitudeIndex }
        if deviceClockIsNotSet { flags |= Flag.deviceClockIsNotSet }

        var writer = ByteWriter()
        writer.write(flags)
        reading.write(to: &writer)
        timestamp?.write(to: &writer)
        if let measurementStatus { writer.write(measurementStatus) }
        if let deviceAndSensorStatus { writer.writeUInt24(deviceAndSensorStatus) }
        if let pulseAmplitudeIndex { writer.write(pulseAmplitudeIndex.bits) }
        return writer.bytes
    }
}

/// A PLX Continuous Measurement (characteristic 0x2A5F; Pulse Oximeter Service 1.0, "PLX Continuous
/// Measurement"), notified periodically while a finger is in the probe.
///
/// Layout, LE: flags u8, SpO2PR-Normal (two SFLOAT), then per flags: bit 0 SpO2PR-Fast, bit 1 SpO2PR-Slow
/// (two SFLOAT each), bit 2 measurement status u16, bit 3 device and sensor status u24, bit 4 pulse amplitude
/// index SFLOAT. "Fast" and "slow" are the same reading with shorter and longer averaging.
public struct PLXContinuousMeasurement: GATTCharacteristicValue {
    public static let characteristicUUID = GATTUUID.Characteristic.plxContinuousMeasurement

    public let normal: SpO2PulseRate
    public let fast: SpO2PulseRate?
    public let slow: SpO2PulseRate?
    public let measurementStatus: UInt16?
    /// 24 bits.
    public let deviceAndSensorStatus: UInt32?
    /// Percent.
    public let pulseAmplitudeIndex: MedicalFloat16?

    /// Throws `outOfRange` when `deviceAndSensorStatus` does not fit 24 bits.
    public init(
        normal: SpO2PulseRate, fast: SpO2PulseRate? = nil, slow: SpO2PulseRate? = nil,
        measurementStatus: UInt16? = nil, deviceAndSensorStatus: UInt32? = nil,
        pulseAmplitudeIndex: MedicalFloat16? = nil
    ) throws(GATTCodecError) {
        try checkDeviceAndSensorStatus(deviceAndSensorStatus)
        self.normal = normal
        self.fast = fast
        self.slow = slow
        self.measurementStatus = measurementStatus
        self.deviceAndSensorStatus = deviceAndSensorStatus
        self.pulseAmplitudeIndex = pulseAmplitudeIndex
    }

    private enum Flag {
        static let fast: UInt8 = 0x01
        static let slow: UInt8 = 0x02
        static let measurementStatus: UInt8 = 0x04
        static let deviceAndSensorStatus: UInt8 = 0x08
        static let pulseAmplitudeIndex: UInt8 = 0x10
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> PLXContinuousMeasurement {
        var reader = ByteReader(bytes)
        let flags = try reader.readUInt8()
        let normal = try SpO2PulseRate.read(from: &reader)
        let fast = flags & Flag.fast != 0 ? try SpO2PulseRate.read(from: &reader) : nil
        let slow = flags & Flag.slow != 0 ? try SpO2PulseRate.read(from: &reader) : nil
        let measurementStatus = flags & Flag.measurementStatus != 0 ? try reader.read(UInt16.self) : nil
        let deviceStatus = flags & Flag.deviceAndSensorStatus != 0 ? try reader.readUInt24() : nil
        let amplitude = flags & Flag.pulseAmplitudeIndex != 0 ? MedicalFloat16(bits: try reader.read(UInt16.self)) : nil
        return try PLXContinuousMeasurement(
            normal: normal, fast: fast, slow: slow, measurementStatus: measurementStatus,
            deviceAndSensorStatus: deviceStatus, pulseAmplitudeIndex: amplitude
        )
    }

    public func encode() -> [UInt8] {
        var flags: UInt8 = 0
        if fast != nil { flags |= Flag.fast }
        if slow != nil { flags |= Flag.slow }
        if measurementStatus != nil { flags |= Flag.measurementStatus }
        if deviceAndSensorStatus != nil { flags |= Flag.deviceAndSensorStatus }
        if pulseAmplitudeIndex != nil { flags |= Flag.pulseAmplitudeIndex }

        var writer = ByteWriter()
        writer.write(flags)
        normal.write(to: &writer)
        fast?.write(to: &writer)
        slow?.write(to: &writer)
        if let measurementStatus { writer.write(measurementStatus) }
        if let deviceAndSensorStatus { writer.writeUInt24(deviceAndSensorStatus) }
        if let pulseAmplitudeIndex { writer.write(pulseAmplitudeIndex.bits) }
        return writer.bytes
    }
}
