import Wearables

/// The sensor's side of the Polar Measurement Data service: answers control point requests, keeps which streams
/// run with which settings, and turns the heart and the motion into the data frames that are due. Pure: the
/// actor passes the time (seconds since the connection began), the link's MTU and the signals.
///
/// Behaviour (the SDK's `BlePMDClient` and `PmdControlPointResponse` for the layout, *modeled* where the public
/// documents do not say what a device answers):
/// - get settings (op 1) answers the model's list for an offered type, `invalidMeasurementType` (2) otherwise;
///   get full settings (op 4) the same list (the simulated models have no SDK mode).
/// - start (op 2) refuses an unoffered type (2), a running one (`alreadyInState`, 6), a setting outside the list
///   (7 resolution, 8 sample rate, 9 range, 11 channels, 5 another type), and a link whose MTU is below
///   `minimumMTU` or cannot carry a frame of one sample (`invalidMTU`, 10: the Verity Sense's compressed PPG needs
///   more than the default 23); a configured `startError` answers every start (or those of `startErrorType`)
///   with that status instead. A started stream's response carries the factor for the compressed gyroscope and
///   magnetometer, as the SDK expects it in the start response.
/// - A response longer than the MTU allows goes out in parts, "more" set on all but the last (`parts(of:mtu:)`).
/// - stop (op 3) of a running type succeeds, of a stopped one answers `alreadyInState`; measurement status (op 5)
///   lists the running types. Other op codes answer `notSupported` (3); a request that does not decode
///   `invalidParameter` (5).
/// - Frames: every sample has its own device time (start + n / rate), so however late a tick runs no sample is
///   skipped; a frame is stamped with its last sample's time and holds as many samples as the MTU lets through.
struct PolarPMDEngine: Sendable {
    struct Faults: Sendable, Equatable {
        var startError: UInt8?
        var startErrorType: PMDMeasurementType?
        var minimumMTU = 23
    }

    private struct Running: Sendable {
        var settings: PMDSettingSelection
        var startedAt: Double
        /// Samples sent so far (the next is number `sent + 1`).
        var sent = 0
        /// PPI: the time of the last beat sent.
        var lastBeat: Double
    }

    let model: PolarSimulatedModel
    let faults: Faults
    /// The device clock at the connection's start, in Polar nanoseconds.
    let clockOrigin: UInt64
    private var running: [PMDMeasurementType: Running] = [:]

    init(model: PolarSimulatedModel, faults: Faults, clockOrigin: UInt64) {
        self.model = model
        self.faults = faults
        self.clockOrigin = clockOrigin
    }

    var runningTypes: [PMDMeasurementType] { running.keys.sorted { $0.rawValue < $1.rawValue } }

    func settings(of type: PMDMeasurementType) -> PMDSettingSelection? { running[type]?.settings }

    /// The time of the oldest sample not yet sent (for the signal to keep its beats from).
    var oldestPending: Double { running.values.map(\.startedAt).min() ?? 0 }

    // MARK: Control point

    mutating func handle(_ bytes: [UInt8], at now: Double, mtu: Int) -> [UInt8] {
        guard let request = try? PMDControlPointRequest.decode(bytes) else {
            return PMDControlPointResponse(opCode: bytes.first ?? 0, measurementTypeByte: bytes.count > 1 ? bytes[1] : 0,
                                           statusCode: PMDResponseStatus.invalidParameter.rawValue, moreByte: nil).encode()
        }
        func answer(_ type: UInt8, _ status: PMDResponseStatus, _ parameters: [UInt8] = []) -> [UInt8] {
            PMDControlPointResponse(opCode: request.opCode.rawValue, measurementTypeByte: type, statusCode: status.rawValue,
                                    moreByte: status == .success ? 0 : nil, parameters: parameters).encode()
        }
        switch request {
        case .getSettings(let type, _), .getFullSettings(let type, _):
            guard let stream = model.streams[type] else { return answer(type.rawValue, .invalidMeasurementType) }
            return answer(type.rawValue, .success, (try? stream.settings.encode()) ?? [])
        case .start(let type, _, let selection, _):
            let status = startStatus(type, selection, mtu: mtu)
            guard status == .success else { return answer(type.rawValue, status) }
            running[type] = Running(settings: selection, startedAt: now, lastBeat: now)
            return answer(type.rawValue, .success, startParameters(type))
        case .stop(let type):
            guard running.removeValue(forKey: type) != nil else { return answer(type.rawValue, .alreadyInState) }
            return answer(type.rawValue, .success)
        case .getMeasurementStatus:
            let status = PMDMeasurementStatus(activities: Dictionary(uniqueKeysWithValues: running.keys.map { ($0, .online) }))
            return answer(0, .success, status.encode())
        default:
            return answer(0, .notSupported)
        }
    }

    private func startStatus(_ type: PMDMeasurementType, _ selection: PMDSettingSelection, mtu: Int) -> PMDResponseStatus {
        guard let stream = model.streams[type] else { return .invalidMeasurementType }
        if let error = faults.startError, faults.startErrorType.map({ $0 == type }) ?? true {
            return PMDResponseStatus(rawValue: error) ?? .invalidState
        }
        guard running[type] == nil else { return .alreadyInState }
        if let rejection = PMDSettings.validate(requested: selection, against: stream.settings) {
            switch rejection.type {
            case .sampleRate: return .invalidSampleRate
            case .resolution: return .invalidResolution
            case .range: return .invalidRange
            case .channels: return .invalidNumberOfChannels
            default: return .invalidParameter
            }
        }
        guard mtu >= faults.minimumMTU, Self.smallestFrameLength(stream.framing) <= mtu - 3 else { return .invalidMTU }
        return .success
    }

    private func startParameters(_ type: PMDMeasurementType) -> [UInt8] {
        let factor: Float? = switch model.streams[type]?.framing {
        case .compressedGyroscope(let factor), .compressedMagnetometer(let factor): factor
        default: nil
        }
        guard let factor else { return [] }
        return (try? PMDSettings(values: [.factor: [Int(factor.bitPattern)]]).encode()) ?? []
    }

    /// A response as the indications that carry it on a link of `mtu`: one when it fits, else its parameters
    /// spread over several with "more" set on all but the last (what the SDK's `sendPmdCommand` joins again).
    static func parts(of response: [UInt8], mtu: Int) -> [[UInt8]] {
        let limit = mtu - 3
        guard response.count > limit, let decoded = try? PMDControlPointResponse.decode(response), decoded.isSuccess else {
            return [response]
        }
        let header = 5
        let chunk = max(1, limit - header)
        let parameters = decoded.parameters
        return stride(from: 0, to: parameters.count, by: chunk).map { start in
            let end = min(parameters.count, start + chunk)
            return PMDControlPointResponse(opCode: decoded.opCode, measurementTypeByte: decoded.measurementTypeByte,
                                           statusCode: decoded.statusCode, moreByte: end < parameters.count ? 1 : 0,
                                           parameters: Array(parameters[start..<end])).encode()
        }
    }

    /// The bytes of a frame of one sample: a stream whose smallest frame does not fit a notification cannot run.
    static func smallestFrameLength(_ framing: Framing) -> Int {
        let heart = PolarHeartSignal(meanBPM: 60, variation: 0, seed: 0)
        return frame([1], framing: framing, heart: heart, motion: PolarWalkingMotion(), clock: { _ in 1 })?.encode().count
            ?? PMDDataFrame.headerLength + PMDPPIData.sampleLength
    }

    /// The link went: a Polar sensor stops its streams.
    mutating func stopAll() { running = [:] }

    // MARK: Data

    /// Polar nanoseconds of a time in seconds since the connection began.
    func deviceTime(_ seconds: Double) -> UInt64 { clockOrigin + UInt64(max(0, seconds) * 1_000_000_000) }

    /// The data frames due by `now`, as notification values that fit `mtu`.
    mutating func frames(through now: Double, mtu: Int, heart: PolarHeartSignal, motion: PolarWalkingMotion) -> [[UInt8]] {
        var values: [[UInt8]] = []
        for type in runningTypes {
            guard var stream = running[type], let framing = model.streams[type]?.framing else { continue }
            if framing == .rawPPI {
                let beats = heart.beats(after: stream.lastBeat, through: now)
                for chunk in Self.chunks(beats, size: max(1, (mtu - 3 - PMDDataFrame.headerLength) / PMDPPIData.sampleLength)) {
                    let samples = chunk.map {
                        PMDPPIData.Sample(heartRate: UInt8(clamping: Int((60 / $0.interval).rounded())),
                                          intervalMilliseconds: UInt16(($0.interval * 1000).rounded()),
                                          errorEstimateMilliseconds: 10, blocker: false, skinContact: true, skinContactSupported: true)
                    }
                    values.append(PMDPPIData.frame(samples, timestamp: deviceTime(chunk.last!.time)).encode())
                }
                if let last = beats.last { stream.lastBeat = last.time }
                running[type] = stream
                continue
            }
            let rate = Double(stream.settings[.sampleRate] ?? 1)
            let due = Int(((now - stream.startedAt) * rate).rounded(.down))
            guard due > stream.sent else { continue }
            let times = ((stream.sent + 1)...due).map { stream.startedAt + Double($0) / rate }
            values += Self.encode(times, framing: framing, mtu: mtu, heart: heart, motion: motion, clock: deviceTime)
            stream.sent = due
            running[type] = stream
        }
        return values
    }

    private static func chunks<T>(_ items: [T], size: Int) -> [ArraySlice<T>] {
        stride(from: 0, to: items.count, by: size).map { items[$0..<min(items.count, $0 + size)] }
    }

    /// Frames of the samples at `times`, as many per frame as fit; a compressed frame that does not fit is split.
    private static func encode(_ times: [Double], framing: Framing, mtu: Int, heart: PolarHeartSignal,
                               motion: PolarWalkingMotion, clock: (Double) -> UInt64) -> [[UInt8]] {
        let limit = max(PMDDataFrame.headerLength + 1, mtu - 3)
        let bytesPerSample: Int = switch framing {
        case .rawECG: 3
        case .rawAcceleration: 6
        default: 0
        }
        if bytesPerSample > 0 {
            return chunks(times, size: max(1, (limit - PMDDataFrame.headerLength) / bytesPerSample)).compactMap {
                frame(Array($0), framing: framing, heart: heart, motion: motion, clock: clock)?.encode()
            }
        }
        var values: [[UInt8]] = []
        var pending = times[...]
        while !pending.isEmpty {
            var count = pending.count
            while count > 1, let frame = frame(Array(pending.prefix(count)), framing: framing, heart: heart, motion: motion, clock: clock),
                  frame.encode().count > limit {
                count = max(1, count * limit / frame.encode().count - 1)
            }
            if let frame = frame(Array(pending.prefix(count)), framing: framing, heart: heart, motion: motion, clock: clock) {
                values.append(frame.encode())
            }
            pending = pending.dropFirst(count)
        }
        return values
    }

    typealias Framing = PolarSimulatedModel.Framing

    private static func frame(_ times: [Double], framing: Framing, heart: PolarHeartSignal, motion: PolarWalkingMotion,
                              clock: (Double) -> UInt64) -> PMDDataFrame? {
        guard let last = times.last else { return nil }
        let timestamp = clock(last)
        switch framing {
        case .rawECG:
            return try? PMDECGData.frame(microvolts: times.map(heart.ecgMicrovolts(at:)), timestamp: timestamp)
        case .rawAcceleration, .compressedAcceleration:
            let samples = times.map { time in
                let a = motion.acceleration(at: time)
                return PMDAccelerationData.Sample(x: a.x, y: a.y, z: a.z)
            }
            return framing == .rawAcceleration
                ? try? PMDAccelerationData.rawFrame(samples, bytesPerAxis: 2, timestamp: timestamp)
                : try? PMDAccelerationData.compressedFrame(samples, timestamp: timestamp)
        case .compressedPPG:
            let samples = times.map { time -> [Int32] in
                let pulse = heart.pulse(at: time)
                let base = 180_000.0 + 4000 * pulse
                return [Int32(base), Int32(base * 0.97 + 500), Int32(base * 1.02 - 300), 1200]
            }
            guard let content = try? PMDDeltaCompression.encode(samples, channels: 4, resolution: 24) else { return nil }
            return PMDDataFrame(.ppg, timestamp: timestamp, frameType: 0, isCompressed: true, content: content)
        case .compressedGyroscope(let factor):
            let raw = times.map { time -> [Int32] in
                let r = motion.rotation(at: time)
                return [r.x, r.y, r.z].map { Int32(($0 / Double(factor)).rounded()) }
            }
            return try? PMDGyroscopeData.compressedFrame(raw: raw, timestamp: timestamp)
        case .compressedMagnetometer(let factor):
            let raw = times.map { time -> [Int32] in
                let f = motion.field(at: time)
                return [f.x, f.y, f.z].map { Int32(($0 / Double(factor)).rounded()) }
            }
            guard let content = try? PMDDeltaCompression.encode(raw, channels: 3, resolution: 16) else { return nil }
            return PMDDataFrame(.magnetometer, timestamp: timestamp, frameType: 0, isCompressed: true, content: content)
        case .rawPPI:
            return nil
        }
    }
}
