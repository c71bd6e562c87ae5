import Wearables

/// The simulated H10's file-transfer side (PSFTP): joins the frames a host writes to the MTU characteristic into a
/// request (`PSFTPMessageAssembler`, `PSFTPRequestMessage`, `H10RecordingRequest`, the driver's own codecs), and
/// answers it as a message or a `PSFTPErrorCode`. Pure: bytes and the device's time in, the answer out; the sensor
/// actor cuts the answer into frames at the link's MTU and notifies them.
///
/// The strap keeps one recording at a time (the SDK's `documentation/products/PolarH10.md`: "sensor supports only
/// one recording at the time"), on the device, whether a host is connected or not. Its file system is what the
/// SDK's H10 listing walks: "/" lists "<identifier>/", which lists `SAMPLES.BPB`, once the recording has stopped.
///
/// Which code answers what the public sources leave open is modeled, and docs/protocols/polar.md says so:
/// start while recording → `SYSTEM_BUSY` (202); start while a stopped recording is still stored, and stop while
/// none runs → `OPERATION_NOT_PERMITTED` (106); GET or REMOVE of a path that does not exist →
/// `NO_SUCH_FILE_OR_DIRECTORY` (103); a query or command it does not know → `INVALID_COMMAND` (101); parameters it
/// cannot read → `INVALID_PARAMETER` (102).
struct PolarPSFTPEngine: Sendable {
    enum Answer: Sendable, Equatable {
        /// A message, framed as `more` … `last`.
        case message([UInt8])
        /// A status-0 frame with this code (0: done, nothing to send back).
        case code(UInt16)
        /// A frame of a request still coming, or the host's cancel: nothing to send.
        case none
    }

    let meanBPM: Double
    let variation: Double
    private(set) var recording: PolarH10Recording?
    private var incoming = PSFTPMessageAssembler(maximumLength: 4096)
    private var random: SimulationRandom

    init(meanBPM: Double, variation: Double, seed: UInt64) {
        self.meanBPM = meanBPM
        self.variation = variation
        random = SimulationRandom(seed: seed)
    }

    /// A new connection: a request half written on the last one is forgotten; the recording is not.
    mutating func connected() { incoming = PSFTPMessageAssembler(maximumLength: 4096) }

    /// One frame written by the host at `time` (device seconds).
    mutating func receive(_ frame: [UInt8], at time: Double) -> Answer {
        let output: PSFTPMessageAssembler.Output
        do { output = try incoming.receive(frame) } catch { return .code(Self.invalidParameter) }
        switch output {
        case .incomplete, .failed, .interrupted: return .none
        // The SDK's cancel (`00 00 00`) reads as an empty message: there is nothing to stop, every answer is sent whole.
        case .message(let bytes) where bytes.isEmpty: return .none
        case .message(let bytes): return answer(bytes, at: time)
        }
    }

    private static let invalidCommand: UInt16 = 101
    private static let invalidParameter: UInt16 = 102
    private static let notPermitted: UInt16 = 106

    private mutating func answer(_ bytes: [UInt8], at time: Double) -> Answer {
        let request: H10RecordingRequest
        do {
            request = try H10RecordingRequest.decode(try PSFTPRequestMessage.decode(bytes))
        } catch .unknownIdentifier {
            return .code(Self.invalidCommand)
        } catch {
            return .code(Self.invalidParameter)
        }
        recording?.record(through: time)
        switch request {
        case .start(let identifier, let sampleType, let interval):
            if recording?.isRecording == true { return .code(PSFTPErrorCode.systemBusy.rawValue) }
            guard recording == nil else { return .code(Self.notPermitted) }
            recording = PolarH10Recording(identifier: identifier, sampleType: sampleType, interval: interval, start: time,
                                          meanBPM: meanBPM, variation: variation, seed: random.next())
            return .code(0)
        case .stop:
            guard recording?.isRecording == true else { return .code(Self.notPermitted) }
            recording?.finish(at: time)
            return .code(0)
        case .status:
            let running = recording.flatMap { $0.isRecording ? $0 : nil }
            return .message(H10RecordingStatus(isRecording: running != nil, identifier: running?.identifier).encode())
        case .list(let directory):
            guard let entries = listing(directory) else { return .code(PSFTPErrorCode.noSuchFileOrDirectory.rawValue) }
            return .message(PSFTPDirectory(entries: entries).encode())
        case .fetch(let path):
            guard let stored = storedRecording(at: path), let file = try? stored.file.encode() else {
                return .code(PSFTPErrorCode.noSuchFileOrDirectory.rawValue)
            }
            return .message(file)
        case .remove(let path):
            guard storedRecording(at: path) != nil || (recording?.isRecording == false && path == directory(of: recording)) else {
                return .code(PSFTPErrorCode.noSuchFileOrDirectory.rawValue)
            }
            recording = nil
            return .code(0)
        }
    }

    /// A stopped recording's directory, "/<identifier>/".
    private func directory(of recording: PolarH10Recording?) -> String? {
        recording.map { "/\($0.identifier)/" }
    }

    private func storedRecording(at path: String) -> PolarH10Recording? {
        guard let recording, !recording.isRecording,
              path == "/\(recording.identifier)/\(H10ExerciseListing.samplesFileName)" else { return nil }
        return recording
    }

    private func listing(_ path: String) -> [PSFTPDirectory.Entry]? {
        let stored = recording.flatMap { $0.isRecording ? nil : $0 }
        if path == H10ExerciseListing.root {
            return stored.map { [PSFTPDirectory.Entry(name: "\($0.identifier)/", size: 0)] } ?? []
        }
        guard let stored, path == directory(of: stored) else { return nil }
        let size = (try? stored.file.encode().count) ?? 0
        return [PSFTPDirectory.Entry(name: H10ExerciseListing.samplesFileName, size: UInt64(size))]
    }
}
