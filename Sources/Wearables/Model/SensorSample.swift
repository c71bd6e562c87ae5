/// The sensors of the MQTT contract; the raw value is the topic segment (`sensor/<name>`).
public enum SensorKind: String, Sendable, Hashable, CaseIterable, Codable {
    case accelerometer, gyroscope, magnetometer, orientation
    case rotation
    case gameRotation = "game_rotation"
    case uncalibratedMagnetometer = "uncalibrated_magnetometer"
    case heartRate = "heart_rate"
    case eda, bvp, ibi
    case skinTemperature = "skin_temperature"
    case temperature, spo2, running, cycling
    /// Steps counted today by the device itself (a watch's pedometer), cumulative; it falls back to 0 at the
    /// device's midnight.
    case steps
    /// Heart-rate variability, derived by the gateway from any device's beat intervals (`HeartRateVariabilityCalculator`).
    case hrv
    /// Polar's ECG (µV), photoplethysmogram (counts) and peak-to-peak intervals (docs/protocols/polar.md).
    case ecg, ppg, ppi

    /// The case's own byte, not the raw string: a raw-valued enum takes `RawRepresentable`'s default, which hashes
    /// the string, and a sensor is looked up by kind for every sample. Equality compares the cases, so equal kinds
    /// have equal bytes.
    public func hash(into hasher: inout Hasher) {
        withUnsafeBytes(of: self) { hasher.combine(bytes: $0) }
    }
}

/// How much a motion sensor trusts its reading.
public enum SensorAccuracy: String, Sendable, Equatable {
    case unreliable, low, medium, high
}

/// One reading, in SI units or units named in the contract's keys.
public enum SensorReading: Sendable, Equatable {
    case vector(x: Double, y: Double, z: Double, accuracy: SensorAccuracy?)
    case quaternion(x: Double, y: Double, z: Double, w: Double, accuracy: Double?)
    case uncalibratedVector(x: Double, y: Double, z: Double, biasX: Double, biasY: Double, biasZ: Double)
    case heartRate(bpm: Int, contact: Bool?, energyExpendedKJ: Int?, rrIntervalsMilliseconds: [Double])
    case eda(microsiemens: Double)
    case bvp(value: Double)
    case ibi(seconds: Double)
    case celsius(Double)
    case spo2(percent: Double, pulseBPM: Double?)
    case running(speedMetresPerSecond: Double, cadenceStepsPerMinute: Int, strideMetres: Double?,
                 totalDistanceMetres: Double?, isRunning: Bool?)
    case cycling(wheelRevolutions: UInt32?, crankRevolutions: UInt16?, speedMetresPerSecond: Double?,
                 cadenceRPM: Double?)
    case heartRateVariability(HeartRateVariability)
    /// One ECG sample in microvolts.
    case ecg(microvolts: Int)
    /// One PPG sample: the device's optical channels and, when it measures it, the ambient light (raw counts).
    case ppg(channels: [Int], ambient: Int?)
    /// One beat found in a PPG signal by the device (Polar's PPI).
    case pulseInterval(PulseInterval)
    /// A device's own step counter: the steps it counted today.
    case steps(count: Int)
}

/// A beat-to-beat interval a device measured optically, with its own quality marks.
public struct PulseInterval: Sendable, Equatable {
    public var milliseconds: Int
    /// The device's estimate of the interval's error.
    public var errorEstimateMilliseconds: Int
    /// The heart rate the device computed with it, in bpm (0 when it has none).
    public var heartRate: Int
    /// The device marks the interval invalid (movement blocked the measurement).
    public var blocker: Bool
    /// Skin contact, nil when the device cannot tell.
    public var skinContact: Bool?

    public init(milliseconds: Int, errorEstimateMilliseconds: Int, heartRate: Int, blocker: Bool, skinContact: Bool?) {
        self.milliseconds = milliseconds
        self.errorEstimateMilliseconds = errorEstimateMilliseconds
        self.heartRate = heartRate
        self.blocker = blocker
        self.skinContact = skinContact
    }
}

/// A timestamped reading of one sensor. `timestamp` is Unix time in milliseconds, as the contract's `ts`.
public struct SensorSample: Sendable, Equatable {
    public var sensor: SensorKind
    public var timestamp: Int64
    public var reading: SensorReading

    public init(sensor: SensorKind, timestamp: Int64, reading: SensorReading) {
        self.sensor = sensor
        self.timestamp = timestamp
        self.reading = reading
    }
}
