import Wearables

extension FuzzTarget {
    /// Polar Measurement Data: the control point's feature read, requests, responses and notices, the settings
    /// TLVs, data frames and every frame decoder, the delta decoder (shape from the first two bytes) and the
    /// sample clock over what decoded.
    static let polar = FuzzTarget(
        name: "polar",
        summary: "Polar PMD: feature read, control point requests / responses / notices, settings, data frames "
            + "(ECG, ACC, PPG, PPI, gyroscope, magnetometer), delta compression, sample timing; PSFTP frames, "
            + "messages, H10 recording requests, status, directory and SAMPLES.BPB"
    ) { bytes in
        checkRoundTrip(bytes, PMDFeatures.decode, { $0.encode() }, "PMDFeatures")
        checkRoundTrip(bytes, PMDControlPointNotice.decode, { $0.encode() }, "PMDControlPointNotice")
        if let settings = try? PMDSettings.decode(bytes) {
            expectStable(settings, { (try? $0.encode()) ?? [0xFF] }, PMDSettings.decode, "PMDSettings")
        }
        if let request = try? PMDControlPointRequest.decode(bytes) {
            expectStable(request, { (try? $0.encode()) ?? [0xFF] }, PMDControlPointRequest.decode, "PMDControlPointRequest")
        }
        _ = PMDMeasurementStatus.decode(parameters: bytes)
        if let frame = try? PMDDataFrame.decode(bytes) {
            precondition(frame.encode() == bytes, "a PMD data frame re-encodes differently")
            checkFrame(frame)
        }
        checkDeltaCompression(bytes)
        checkPSFTP(bytes)
    }
}

/// PSFTP (H10 recording): frames, the RFC60 message and the H10 request in it, and the three answers the H10
/// sends as protobuf, each back from its own encoding; the assembler over the input cut into frames never traps.
private func checkPSFTP(_ bytes: [UInt8]) {
    checkRoundTrip(bytes, PSFTPFrame.decode, { $0.encode() }, "PSFTPFrame")
    checkRoundTrip(bytes, PSFTPRequestMessage.decode, { (try? $0.encode()) ?? [] }, "PSFTPRequestMessage")
    if let request = try? H10RecordingRequest.decode(PSFTPRequestMessage.decode(bytes)) {
        guard let message = try? request.message() else { preconditionFailure("H10RecordingRequest \(request) does not encode") }
        precondition((try? H10RecordingRequest.decode(message)) == request, "H10RecordingRequest \(request) decodes differently")
    }
    checkRoundTrip(bytes, H10RecordingStatus.decode, { $0.encode() }, "H10RecordingStatus")
    checkRoundTrip(bytes, PSFTPDirectory.decode, { $0.encode() }, "PSFTPDirectory")
    checkRoundTrip(bytes, H10ExerciseSamples.decode, { (try? $0.encode()) ?? [] }, "H10ExerciseSamples")
    var assembler = PSFTPMessageAssembler(maximumLength: 256)
    var offset = 0
    while offset < bytes.count {
        let length = Int(bytes[offset]) % 24 + 1
        _ = try? assembler.receive(Array(bytes[offset..<min(bytes.count, offset + length)]))
        offset += length
    }
}

/// Every frame decoder on the frame (all but its own type's refuse it), with the factors a device could send,
/// the raw frames' encoders as the oracle (on the content: a type byte's top bits are not the encoders' concern), and the sample clock over the samples that decoded.
private func checkFrame(_ frame: PMDDataFrame) {
    var count: Int?
    for factor: Float in [1, 2.44e-4, .nan, -.infinity] {
        if let samples = try? PMDECGData.decode(frame) {
            count = samples.count
            if frame.frameType == 0, case .microvolts(let values) = samples {
                precondition((try? PMDECGData.frame(microvolts: values.map(\.microvolts), timestamp: frame.timestamp))?.content == frame.content,
                             "ECG type 0 samples re-encode differently")
            }
        }
        if let samples = try? PMDAccelerationData.decode(frame, factor: factor) {
            count = samples.count
            if !frame.isCompressed {
                precondition((try? PMDAccelerationData.rawFrame(samples, bytesPerAxis: Int(frame.frameType) + 1,
                                                                timestamp: frame.timestamp))?.content == frame.content, "raw ACC samples re-encode differently")
            }
        }
        if let samples = try? PMDPPIData.decode(frame) {
            precondition(PMDPPIData.frame(samples, timestamp: frame.timestamp).content == frame.content, "PPI samples re-encode differently")
            let times = PMDSampleTiming.ppiTimestamps(frameTimestamp: frame.timestamp, intervalsMilliseconds: samples.map(\.intervalMilliseconds))
            precondition(times.count == samples.count && zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }, "PPI times go back")
        }
        if let samples = try? PMDGyroscopeData.decode(frame, factor: factor) { count = samples.count }
        if let samples = try? PMDMagnetometerData.decode(frame, factor: factor) { count = samples.count }
        if let samples = try? PMDPPGData.decode(frame, factor: factor) { count = samples.count }
    }
    guard let count else { return }
    for previous in [nil, frame.timestamp / 2, frame.timestamp &- 1] as [UInt64?] {
        guard let times = try? PMDSampleTiming.timestamps(frameTimestamp: frame.timestamp, previousFrameTimestamp: previous,
                                                          sampleCount: count, sampleRate: 130) else { continue }
        precondition(times.count == count && times.last == frame.timestamp, "sample times do not end at the frame's")
        precondition(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }, "sample times go back")
    }
}

/// The first byte picks the channel count (1…25), the second the resolution (1…32); the rest is a compressed
/// frame's content, whose samples must come back from their own encoding.
private func checkDeltaCompression(_ bytes: [UInt8]) {
    guard bytes.count >= 2 else { return }
    let channels = Int(bytes[0]) % 25 + 1
    let resolution = Int(bytes[1]) % 32 + 1
    guard let samples = try? PMDDeltaCompression.decode(Array(bytes.dropFirst(2)), channels: channels, resolution: resolution) else { return }
    precondition(samples.allSatisfy { $0.count == channels }, "a delta sample with the wrong channel count")
    expectStable(samples, { (try? PMDDeltaCompression.encode($0, channels: channels, resolution: resolution)) ?? [] },
                 { try PMDDeltaCompression.decode($0, channels: channels, resolution: resolution) }, "PMD delta samples")
}
