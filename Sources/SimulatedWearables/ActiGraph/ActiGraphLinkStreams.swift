import Wearables

/// When the samples of one stream fall due and what time each carries. Sample *i* is stamped with the wall clock
/// at the stream's start plus *i* / rate (rounded to the millisecond, as `ActiGraphSampleClock` reads it back), so
/// the stamps never drift from the rate; it falls due on the monotonic clock at the same offset from the start, so
/// a late tick delays samples but loses none.
public struct ActiGraphSampleSchedule: Sendable, Equatable {
    public let rateHz: Int
    /// Unix ms of sample 0: the wall clock when the stream started.
    public let startMilliseconds: Int64
    /// The monotonic time (the connection's clock) at which the stream started.
    public let startElapsed: Duration

    public init(rateHz: Int, startMilliseconds: Int64, startElapsed: Duration = .zero) {
        self.rateHz = max(rateHz, 1)
        self.startMilliseconds = startMilliseconds
        self.startElapsed = startElapsed
    }

    public func unixMilliseconds(ofSample index: Int) -> Int64 {
        let rate = Int64(rateHz)
        return startMilliseconds + (Int64(index) * 2000 + rate) / (2 * rate)
    }

    /// How many samples are due by `elapsed`: sample 0 at the start, one more every 1 / rate.
    public func samplesDue(by elapsed: Duration) -> Int {
        let since = elapsed - startElapsed
        guard since >= .zero else { return 0 }
        let parts = since.components
        let nanoseconds = parts.attoseconds / 1_000_000_000
        return Int(parts.seconds) * rateHz + Int(nanoseconds * Int64(rateHz) / 1_000_000_000) + 1
    }
}

/// The Raw Stream of one run of raw streaming: `ActiGraphRawPacket`s at the configured rate, as many samples per
/// packet as a notification of the link's MTU holds. Only whole packets go out: with a large MTU a packet waits
/// until its last sample is due. Pure: time comes in as `elapsed`.
public struct ActiGraphRawStreamGenerator: Sendable {
    /// Sequence u16, time u32 + u16, rate u8, count u8.
    static let headerBytes = 10
    static let bytesPerSample = 6

    public let schedule: ActiGraphSampleSchedule
    public let samplesPerPacket: Int
    /// Samples put in packets so far.
    public private(set) var samplesGenerated = 0
    /// The next packet's sequence number (per connection, wraps).
    public private(set) var nextSequence: UInt16
    private var motion: ActiGraphWristMotion

    /// As many samples as fit in `mtu − 3` bytes after the header, 1 to 40: 1 at the default MTU of 23.
    public static func samplesPerPacket(mtu: Int) -> Int {
        min(max((mtu - 3 - headerBytes) / bytesPerSample, 1), ActiGraphRawPacket.maximumSamples)
    }

    public init(schedule: ActiGraphSampleSchedule, mtu: Int, sequence: UInt16 = 0, motion: ActiGraphWristMotion) {
        self.schedule = schedule
        samplesPerPacket = Self.samplesPerPacket(mtu: mtu)
        nextSequence = sequence
        self.motion = motion
    }

    /// The packets whose samples are all due by `elapsed`, in order.
    public mutating func packets(by elapsed: Duration) -> [ActiGraphRawPacket] {
        let due = schedule.samplesDue(by: elapsed)
        var packets: [ActiGraphRawPacket] = []
        while due - samplesGenerated >= samplesPerPacket { packets.append(nextPacket()) }
        return packets
    }

    /// The next packet, due or not.
    public mutating func nextPacket() -> ActiGraphRawPacket {
        let first = samplesGenerated
        let start = schedule.unixMilliseconds(ofSample: first)
        let samples = (first..<(first + samplesPerPacket)).map { index in
            let time = Double(schedule.unixMilliseconds(ofSample: index)) / 1000
            return ActiGraphAxes(motion.acceleration(atUnixSeconds: time), step: 1 / ActiGraphRawPacket.countsPerG)
        }
        samplesGenerated += samplesPerPacket
        defer { nextSequence &+= 1 }
        return ActiGraphRawPacket(sequence: nextSequence, firstSampleSeconds: UInt32(clamping: start / 1000),
                                  firstSampleMilliseconds: UInt16(start % 1000), rateHz: UInt8(clamping: schedule.rateHz),
                                  samples: samples)
    }
}

/// One IMU sensor's stream: `ActiGraphIMUPacket`s at the sensor's rate (accelerometer, gyroscope and magnetometer
/// 50 Hz, temperature 1 Hz), as many samples per packet as the MTU holds (temperature: one, so it is never held
/// back for seconds). Pure like `ActiGraphRawStreamGenerator`.
public struct ActiGraphIMUStreamGenerator: Sendable {
    /// Sensor u8, sequence u16, time u32 + u16, rate u8, count u8.
    static let headerBytes = 11
    static let maximumSamples = 40

    public let sensor: ActiGraphIMUSensor
    public let schedule: ActiGraphSampleSchedule
    public let samplesPerPacket: Int
    public private(set) var samplesGenerated = 0
    public private(set) var nextSequence: UInt16
    private var motion: ActiGraphWristMotion

    public static func rateHz(of sensor: ActiGraphIMUSensor) -> Int { sensor == .temperature ? 1 : 50 }

    public static func samplesPerPacket(sensor: ActiGraphIMUSensor, mtu: Int) -> Int {
        guard sensor != .temperature else { return 1 }
        return min(max((mtu - 3 - headerBytes) / (2 * sensor.valuesPerSample), 1), maximumSamples)
    }

    /// `startMilliseconds` and `startElapsed` as in `ActiGraphSampleSchedule`; the rate is the sensor's.
    public init(sensor: ActiGraphIMUSensor, startMilliseconds: Int64, startElapsed: Duration = .zero, mtu: Int,
                sequence: UInt16 = 0, motion: ActiGraphWristMotion) {
        self.sensor = sensor
        schedule = ActiGraphSampleSchedule(rateHz: Self.rateHz(of: sensor), startMilliseconds: startMilliseconds,
                                           startElapsed: startElapsed)
        samplesPerPacket = Self.samplesPerPacket(sensor: sensor, mtu: mtu)
        nextSequence = sequence
        self.motion = motion
    }

    public mutating func packets(by elapsed: Duration) -> [ActiGraphIMUPacket] {
        let due = schedule.samplesDue(by: elapsed)
        var packets: [ActiGraphIMUPacket] = []
        while due - samplesGenerated >= samplesPerPacket { packets.append(nextPacket()) }
        return packets
    }

    public mutating func nextPacket() -> ActiGraphIMUPacket {
        let first = samplesGenerated
        let start = schedule.unixMilliseconds(ofSample: first)
        let samples = (first..<(first + samplesPerPacket)).map { index in
            sample(atUnixSeconds: Double(schedule.unixMilliseconds(ofSample: index)) / 1000)
        }
        samplesGenerated += samplesPerPacket
        defer { nextSequence &+= 1 }
        return ActiGraphIMUPacket(sensor: sensor, sequence: nextSequence, firstSampleSeconds: UInt32(clamping: start / 1000),
                                  firstSampleMilliseconds: UInt16(start % 1000), rateHz: UInt8(clamping: schedule.rateHz),
                                  rawSamples: samples)
    }

    private mutating func sample(atUnixSeconds time: Double) -> [Int16] {
        let axes: ActiGraphVector
        switch sensor {
        case .accelerometer: axes = motion.acceleration(atUnixSeconds: time)
        case .gyroscope: axes = motion.rotation(atUnixSeconds: time)
        case .magnetometer: axes = motion.magneticField(atUnixSeconds: time)
        case .temperature: return [Int16(steps: motion.skinTemperature(atUnixSeconds: time), of: sensor.scale)]
        }
        let raw = ActiGraphAxes(axes, step: sensor.scale)
        return [raw.x, raw.y, raw.z]
    }
}

/// The streams of one connection as the Link runs them: what `ActiGraphLinkEngine.streams` switches on, turned
/// into packets as time passes. Pure: the peripheral passes the connection's monotonic time (`elapsed`) and,
/// when the settings change, the wall clock.
///
/// - Raw streaming starts afresh (new clock, sample 0 at the wall clock then) when it is switched on or its rate
///   changes; settings that leave it on at the same rate do not disturb it. Each IMU sensor likewise starts when
///   it enters the mask and stops when it leaves it.
/// - Sequence numbers are per connection and per stream (raw, and each IMU sensor): a stream switched off and on
///   again carries on from its last number, so the host sees no false gap. A new connection starts at 0.
/// - `seed` draws each run's sensor noise, in the order the runs start.
public struct ActiGraphLinkStreams: Sendable {
    public let mtu: Int
    public let activity: ActiGraphSimulatedActivity
    public private(set) var settings = ActiGraphStreamSettings.off
    public private(set) var raw: ActiGraphRawStreamGenerator?
    public private(set) var imu: [ActiGraphIMUSensor: ActiGraphIMUStreamGenerator] = [:]
    private var seeds: SimulationRandom
    private var rawSequence: UInt16 = 0
    private var imuSequences: [ActiGraphIMUSensor: UInt16] = [:]

    public init(mtu: Int, activity: ActiGraphSimulatedActivity, seed: UInt64) {
        self.mtu = mtu
        self.activity = activity
        seeds = SimulationRandom(seed: seed)
    }

    /// Whether nothing streams: the peripheral need not tick.
    public var isIdle: Bool { raw == nil && imu.isEmpty }

    /// Switches streams on and off to match `settings`; `unixMilliseconds` is the wall clock at `elapsed`.
    public mutating func apply(_ settings: ActiGraphStreamSettings, elapsed: Duration, unixMilliseconds: Int64) {
        defer { self.settings = settings }
        let rawRunsOn = settings.rawStreaming && raw?.schedule.rateHz == Int(settings.rawRateHz)
        if !rawRunsOn {
            if let stopped = raw { rawSequence = stopped.nextSequence }
            raw = nil
            if settings.rawStreaming {
                let schedule = ActiGraphSampleSchedule(rateHz: Int(settings.rawRateHz), startMilliseconds: unixMilliseconds,
                                                       startElapsed: elapsed)
                raw = ActiGraphRawStreamGenerator(schedule: schedule, mtu: mtu, sequence: rawSequence,
                                                  motion: ActiGraphWristMotion(activity: activity, seed: seeds.next()))
            }
        }
        for sensor in ActiGraphIMUSensor.allCases {
            let wanted = settings.imu.contains(ActiGraphIMUMask(sensor))
            if !wanted, let stopped = imu.removeValue(forKey: sensor) {
                imuSequences[sensor] = stopped.nextSequence
            } else if wanted, imu[sensor] == nil {
                imu[sensor] = ActiGraphIMUStreamGenerator(
                    sensor: sensor, startMilliseconds: unixMilliseconds, startElapsed: elapsed, mtu: mtu,
                    sequence: imuSequences[sensor] ?? 0, motion: ActiGraphWristMotion(activity: activity, seed: seeds.next()))
            }
        }
    }

    /// Every packet due by `elapsed`: raw in order, IMU sensor by sensor (accelerometer first), each in order.
    public mutating func packets(by elapsed: Duration) -> (raw: [ActiGraphRawPacket], imu: [ActiGraphIMUPacket]) {
        let rawPackets = raw?.packets(by: elapsed) ?? []
        var imuPackets: [ActiGraphIMUPacket] = []
        for sensor in ActiGraphIMUSensor.allCases {
            if let packets = imu[sensor]?.packets(by: elapsed) { imuPackets += packets }
        }
        return (rawPackets, imuPackets)
    }
}

extension ActiGraphAxes {
    /// The nearest raw reading of `value` for a sensor whose one step is `step` in the value's unit.
    init(_ value: ActiGraphVector, step: Double) {
        self.init(x: Int16(steps: value.x, of: step), y: Int16(steps: value.y, of: step), z: Int16(steps: value.z, of: step))
    }
}

extension Int16 {
    /// `value` in steps of `step`, rounded and clamped to what an i16 holds (±8 g for raw acceleration).
    fileprivate init(steps value: Double, of step: Double) {
        let steps = (value / step).rounded()
        guard steps.isFinite else {
            self = 0
            return
        }
        self = Int16(Swift.min(Swift.max(steps, Double(Int16.min)), Double(Int16.max)))
    }
}
