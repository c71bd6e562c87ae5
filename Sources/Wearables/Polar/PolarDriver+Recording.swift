import FoundationEssentials
import BlueZ

/// `request/recording`: the H10's own recording (start, stop, status, list, fetch, remove) over PSFTP, one
/// exchange at a time (`PolarFileTransfer`). The SDK offers it for the H10 alone (`polar_device_capabilities.json`:
/// `recordingSupported` only for "h10"); the driver offers it where the strap's Device Information model is "H10"
/// and the PSFTP MTU characteristic is there, and answers `NOT_SUPPORTED` everywhere else.
///
/// A fetched recording is answered with its samples and is also a durable record, `fitness/recording`: a study's
/// data outlives a requester that was not listening and a broker that was away (the spool), as GoFIT and ActiGraph
/// history does. Its `ts` is when this gateway started the recording; for one started elsewhere, when it was first
/// fetched here (`start_known` false). Both are kept, so fetching again publishes the same record with the same
/// `id`. The recording stays on the strap until `remove`.
extension PolarDriver {
    /// The storage entry of start times, by identifier: `{"run1":{"ts":…,"start_known":true}}`.
    static let recordingStartsEntry = "h10_recording_starts"

    /// The strap's PSFTP MTU characteristic, when this device records on itself (an H10).
    func recordingCharacteristic(_ link: DeviceLink) -> GattCharacteristicInfo? {
        let model = connection.withLock { $0.model }
        guard model?.trimmingWhitespace().uppercased() == "H10",
              let characteristic = link.characteristic(service: PolarUUID.Service.fileTransfer, PolarUUID.Characteristic.fileTransferMTU),
              characteristic.canNotify else { return nil }
        return characteristic
    }

    /// Reads the request before the gateway does anything else with it, so a wrong one is `INVALID_VALUE` whether or
    /// not the strap is connected.
    public static func contractArguments(for command: String, _ arguments: [String: DeviceValue]) throws(CommandError) -> [String: DeviceValue] {
        if command == "recording" { _ = try H10RecordingCommand(RequestReader(arguments)) }
        return arguments
    }

    func recording(_ command: H10RecordingCommand, link: DeviceLink) async throws(CommandError) -> DeviceValue {
        guard let characteristic = recordingCharacteristic(link) else {
            // A link that just dropped takes its GATT objects with it.
            guard link.isConnected else { throw CommandError(.deviceDisconnected, "the device is not connected") }
            throw CommandError(.notSupported, "recording on the device is offered by the Polar H10 alone; this device has no H10 file transfer")
        }
        let outcome = await fileTransfer.requests.run { [self] () async -> Result<DeviceValue, CommandError> in
            do throws(CommandError) {
                return .success(try await perform(command, characteristic, link))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    private func perform(_ command: H10RecordingCommand, _ characteristic: GattCharacteristicInfo,
                         _ link: DeviceLink) async throws(CommandError) -> DeviceValue {
        let what = "recording \(command.action)"
        func exchange(_ request: H10RecordingRequest) async throws(CommandError) -> [UInt8] {
            try await fileTransfer.exchange(request, what: what, on: characteristic, link: link)
        }
        switch command {
        case .start(let identifier, let sampleType, let interval):
            _ = try await exchange(.start(identifier: identifier, sampleType: sampleType, interval: interval))
            try rememberStart(of: identifier, at: link.now, known: true)
            link.emit(.state(["recording": .object(["active": true, "identifier": .text(identifier)])]))
            return .object(["recording": true, "identifier": .text(identifier), "sample_type": .text(sampleType.rawValue),
                            "interval_s": .integer(Int64(interval.rawValue))])
        case .stop:
            _ = try await exchange(.stop)
            // null removes the identifier from the state (a merge patch).
            link.emit(.state(["recording": .object(["active": false, "identifier": .null])]))
            return .object(["recording": false])
        case .status:
            let bytes = try await exchange(.status)
            let status = try decode(what) { () throws(GATTCodecError) in try H10RecordingStatus.decode(bytes) }
            return publish(status, link)
        case .list:
            // The SDK's H10 walk: "/" and every directory it lists, collecting each SAMPLES.BPB.
            var pending = [H10ExerciseListing.root]
            var visited = 0
            var exercises: [H10ExerciseListing.Exercise] = []
            while !pending.isEmpty {
                visited += 1
                guard visited <= Self.maximumDirectories else {
                    throw CommandError(.internalError, "\(what): the device lists more than \(Self.maximumDirectories) directories")
                }
                let directory = pending.removeFirst()
                let bytes = try await exchange(.list(directory: directory))
                let listing = try decode(what) { () throws(GATTCodecError) in try PSFTPDirectory.decode(bytes) }
                let step = H10ExerciseListing.step(directory: directory, listing: listing)
                pending += step.subdirectories
                exercises += step.exercises
            }
            return .object(["exercises": .list(exercises.map { exercise in
                .object(["identifier": .text(exercise.identifier), "path": .text(exercise.path), "size": .integer(Int64(clamping: exercise.size))])
            })])
        case .fetch(let identifier):
            let bytes = try await exchange(.fetch(path: H10RecordingCommand.path(of: identifier)))
            let samples = try decode(what) { () throws(GATTCodecError) in try H10ExerciseSamples.decode(bytes) }
            let start = try startOf(identifier, now: link.now)
            let record = recordingRecord(identifier, samples, start: start, link)
            try await link.emitDurably([record])
            var answer = record.fields
            answer["record_id"] = .text(record.id)
            answer["ts"] = .integer(record.timestamp)
            return .object(answer)
        case .remove(let identifier):
            _ = try await exchange(.remove(path: H10RecordingCommand.path(of: identifier)))
            try forgetStart(of: identifier)
            return .object(["removed": .text(identifier)])
        }
    }
}

extension PolarDriver {
    /// The H10 keeps one recording; a listing that goes deeper than this is not an H10's.
    static let maximumDirectories = 64

    private func decode<Value>(_ what: String, _ body: () throws(GATTCodecError) -> Value) throws(CommandError) -> Value {
        do { return try body() } catch {
            throw CommandError(.internalError, "\(what): the device's answer could not be decoded: \(error)")
        }
    }

    /// The state's `recording` (`{"active":true,"identifier":"run1"}`) and the answer to `status`.
    private func publish(_ status: H10RecordingStatus, _ link: DeviceLink) -> DeviceValue {
        let identifier = status.isRecording ? status.identifier.map(DeviceValue.text) : nil
        let state: [String: DeviceValue] = ["active": .flag(status.isRecording), "identifier": identifier ?? .null]
        link.emit(.state(["recording": .object(state)]))
        var answer: [String: DeviceValue] = ["recording": .flag(status.isRecording)]
        if let identifier = status.identifier { answer["identifier"] = .text(identifier) }
        return .object(answer)
    }

    /// At every connection: whether the strap records, for the state (it goes on recording while away).
    func publishRecordingStatus(_ link: DeviceLink) async {
        do throws(CommandError) {
            _ = try await recording(.status, link: link)
        } catch {
            link.logger.info("could not read the strap's recording status", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Start times

    private func rememberStart(of identifier: String, at timestamp: Int64, known: Bool) throws(CommandError) {
        var starts = storage.load(Self.recordingStartsEntry) ?? [:]
        starts[identifier] = .object(["ts": .integer(timestamp), "start_known": .flag(known)])
        try storage.save(Self.recordingStartsEntry, starts)
    }

    private func forgetStart(of identifier: String) throws(CommandError) {
        var starts = storage.load(Self.recordingStartsEntry) ?? [:]
        guard starts.removeValue(forKey: identifier) != nil else { return }
        try storage.save(Self.recordingStartsEntry, starts)
    }

    /// When the recording started, if this gateway started it; else when it was first fetched here (kept, so a
    /// second fetch is the same record).
    private func startOf(_ identifier: String, now: Int64) throws(CommandError) -> (ts: Int64, known: Bool) {
        if let start = storage.load(Self.recordingStartsEntry)?[identifier], let ts = start["ts"]?.integer {
            return (ts, start["start_known"]?.flag ?? false)
        }
        try rememberStart(of: identifier, at: now, known: false)
        return (now, false)
    }

    /// `fitness/recording`: `{"id","ts","identifier","sample_type","interval_s","start_known","heart_rates"|"rr_ms",
    /// "samples","offline"?}`; the `id` is the strap's serial (its address when it has none), the identifier and
    /// the start.
    private func recordingRecord(_ identifier: String, _ samples: H10ExerciseSamples, start: (ts: Int64, known: Bool),
                                 _ link: DeviceLink) -> FitnessRecord {
        let serial = connection.withLock { $0.serial } ?? link.address.description.replacing(":", with: "")
        var fields: [String: DeviceValue] = ["identifier": .text(identifier), "start_known": .flag(start.known)]
        fields["interval_s"] = samples.intervalMilliseconds % 1000 == 0
            ? .integer(Int64(clamping: samples.intervalMilliseconds / 1000)) : .number(Double(samples.intervalMilliseconds) / 1000)
        if let rr = samples.rrIntervalsMilliseconds {
            fields["sample_type"] = .text(H10RecordingSampleType.rrInterval.rawValue)
            fields["rr_ms"] = .list(rr.map { .integer(Int64($0)) })
            fields["samples"] = .integer(Int64(rr.count))
        } else {
            fields["sample_type"] = .text(H10RecordingSampleType.heartRate.rawValue)
            fields["heart_rates"] = .list(samples.heartRates.map { .integer(Int64($0)) })
            fields["samples"] = .integer(Int64(samples.heartRates.count))
        }
        if !samples.heartRateOffline.isEmpty {
            fields["offline"] = .list(samples.heartRateOffline.map { .list([.integer(Int64($0.start)), .integer(Int64($0.stop))]) })
        }
        return FitnessRecord(kind: "recording", id: "\(serial)-recording-\(identifier)-\(start.ts / 1000)", timestamp: start.ts,
                             fields: fields)
    }
}
