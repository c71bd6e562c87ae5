/// Turns PMD data frames into the contract's samples, stamping each with its time: what the driver's data
/// notifications go through. Pure but for its own clock state (the previous frame per stream and frame type,
/// which `PMDSampleTiming` spreads samples back to).
///
/// Units as the contract has them: ECG µV, acceleration in g (Polar sends mG), gyroscope °/s, magnetometer µT
/// (Polar sends gauss: 1 G = 100 µT), PPG raw counts, PPI ms. PPG frames that carry no optical values (sensor
/// gains, operation mode, sport id) and ECG's two-channel type 3 (the SDK names neither value) give no samples.
public struct PolarSampleDecoder: Sendable {
    /// What a started stream needs to decode and time its frames.
    struct Running: Sendable {
        var sampleRate: Int
        var factor: Float
        /// Timestamp of the last frame per frame type byte (compression bit included).
        var previous: [UInt8: UInt64] = [:]
    }

    private var running: [PMDMeasurementType: Running] = [:]

    public init() {}

    /// A stream was started with `settings` (its sample rate) and the start response's factor (1 when none).
    public mutating func started(_ type: PMDMeasurementType, sampleRate: Int, factor: Float?) {
        running[type] = Running(sampleRate: sampleRate, factor: factor ?? 1)
    }

    public mutating func stopped(_ type: PMDMeasurementType) { running[type] = nil }

    public mutating func reset() { running = [:] }

    public enum Failure: Error, Sendable, Equatable {
        /// A frame of a stream this decoder was not told is running (the device kept a stream from before).
        case notStarted(UInt8)
        case malformed(GATTCodecError)
        case timing(PMDSampleTiming.Failure)
    }

    /// The samples of one notification, oldest first.
    public mutating func decode(_ bytes: [UInt8]) throws(Failure) -> [SensorSample] {
        let frame: PMDDataFrame
        do { frame = try PMDDataFrame.decode(bytes) } catch { throw .malformed(error) }
        guard let type = frame.measurementType, var stream = running[type] else { throw .notStarted(bytes.first ?? 0) }
        let frameKey = frame.frameType | (frame.isCompressed ? 0x80 : 0)
        let previous = stream.previous[frameKey]
        let samples: [SensorSample]
        do {
            samples = try decode(frame, type: type, stream: stream, previous: previous)
        } catch let error as GATTCodecError {
            throw .malformed(error)
        } catch let error as PMDSampleTiming.Failure {
            throw .timing(error)
        } catch {
            throw .malformed(.outOfRange(field: "PMD frame", value: 0))
        }
        stream.previous[frameKey] = frame.timestamp
        running[type] = stream
        return samples
    }

    private func times(_ frame: PMDDataFrame, count: Int, stream: Running, previous: UInt64?) throws -> [Int64] {
        try PMDSampleTiming.timestamps(frameTimestamp: frame.timestamp, previousFrameTimestamp: previous,
                                       sampleCount: count, sampleRate: stream.sampleRate)
            .map(PMDSampleTiming.unixMilliseconds(fromPolarNanoseconds:))
    }

    private func decode(_ frame: PMDDataFrame, type: PMDMeasurementType, stream: Running, previous: UInt64?) throws -> [SensorSample] {
        switch type {
        case .ecg:
            guard case .microvolts(let values) = try PMDECGData.decode(frame), !values.isEmpty else { return [] }
            return zip(values, try times(frame, count: values.count, stream: stream, previous: previous)).map {
                SensorSample(sensor: .ecg, timestamp: $1, reading: .ecg(microvolts: Int($0.microvolts)))
            }
        case .acc:
            let values = try PMDAccelerationData.decode(frame, factor: stream.factor)
            guard !values.isEmpty else { return [] }
            return zip(values, try times(frame, count: values.count, stream: stream, previous: previous)).map {
                SensorSample(sensor: .accelerometer, timestamp: $1, reading: .vector(
                    x: Double($0.x) / 1000, y: Double($0.y) / 1000, z: Double($0.z) / 1000, accuracy: nil))
            }
        case .gyroscope:
            let values = try PMDGyroscopeData.decode(frame, factor: stream.factor)
            guard !values.isEmpty else { return [] }
            return zip(values, try times(frame, count: values.count, stream: stream, previous: previous)).map {
                SensorSample(sensor: .gyroscope, timestamp: $1, reading: .vector(
                    x: Double($0.x), y: Double($0.y), z: Double($0.z), accuracy: nil))
            }
        case .magnetometer:
            let values = try PMDMagnetometerData.decode(frame, factor: stream.factor)
            guard !values.isEmpty else { return [] }
            return zip(values, try times(frame, count: values.count, stream: stream, previous: previous)).map {
                SensorSample(sensor: .magnetometer, timestamp: $1, reading: .vector(
                    x: Double($0.x) * 100, y: Double($0.y) * 100, z: Double($0.z) * 100, accuracy: nil))
            }
        case .ppg:
            let values: [(channels: [Int], ambient: Int?)] = try PMDPPGData.decode(frame, factor: stream.factor).compactMap {
                switch $0 {
                case .ppgAndAmbient(let ppg, let ambient): (ppg.map(Int.init), Int(ambient))
                case .channels(let ppg, _): (ppg.map(Int.init), nil)
                case .redGreenInfrared(let red, let green, let infrared, _): ((red + green + infrared).map(Int.init), nil)
                case .integrationAndGain, .operationMode, .sportID: nil
                }
            }
            guard !values.isEmpty else { return [] }
            return zip(values, try times(frame, count: values.count, stream: stream, previous: previous)).map {
                SensorSample(sensor: .ppg, timestamp: $1, reading: .ppg(channels: $0.channels, ambient: $0.ambient))
            }
        case .ppi:
            let values = try PMDPPIData.decode(frame)
            let stamps = PMDSampleTiming.ppiTimestamps(frameTimestamp: frame.timestamp,
                                                       intervalsMilliseconds: values.map(\.intervalMilliseconds))
            return zip(values, stamps).map { sample, time in
                SensorSample(sensor: .ppi, timestamp: PMDSampleTiming.unixMilliseconds(fromPolarNanoseconds: time),
                             reading: .pulseInterval(PulseInterval(
                                milliseconds: Int(sample.intervalMilliseconds),
                                errorEstimateMilliseconds: Int(sample.errorEstimateMilliseconds),
                                heartRate: Int(sample.heartRate), blocker: sample.blocker,
                                skinContact: sample.skinContactSupported ? sample.skinContact : nil)))
            }
        default:
            return []
        }
    }
}
