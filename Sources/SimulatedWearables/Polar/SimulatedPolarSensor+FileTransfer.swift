import Wearables

/// The H10's PSFTP service (`PolarUUID.Service.fileTransfer`, 0xFEEE): the MTU characteristic takes request frames
/// (write, with or without response, as the SDK writes them) and notifies the answer's frames; the device-to-host
/// and host-to-device characteristics exist as on the strap, and H10 recording does not use them.
///
/// `PolarPSFTPEngine` answers; this cuts the answer into RFC76 frames at the link's ATT payload (MTU − 3) and
/// notifies them a moment after the write, as the control point's responses are. The recording clock is the
/// device's: seconds since the sensor was created, times `recording_speed`, so a test records an hour in a second.
/// Fault `psftp_drop_after_frames` (n > 0): an answer longer than n frames is cut after n and the strap drops the
/// link, as one walking out of range in the middle of a fetch would. Fault `psftp_silent`: the strap takes every
/// write and never answers, so a host's wait for an answer ends in its timeout.
extension SimulatedPolarSensor {
    struct FileTransferFaults: Sendable {
        var dropAfterFrames = 0
        var silent = false
    }

    static let fileTransferMTUUUID = BluetoothUUID(string: PolarUUID.Characteristic.fileTransferMTU)!
    static let fileTransferService = SimulatedService(BluetoothUUID(string: PolarUUID.Service.fileTransfer)!, characteristics: [
        SimulatedCharacteristic(fileTransferMTUUUID, flags: [.write, .writeWithoutResponse, .notify]),
        SimulatedCharacteristic(BluetoothUUID(string: PolarUUID.Characteristic.fileTransferDeviceToHost)!, flags: .notify),
        SimulatedCharacteristic(BluetoothUUID(string: PolarUUID.Characteristic.fileTransferHostToDevice)!,
                                flags: [.write, .writeWithoutResponse]),
    ])

    /// Seconds on the device's recording clock.
    var recordingTime: Double {
        let duration = time.now - recordingClockStart
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return seconds * recordingSpeed
    }

    func fileTransferWrite(_ value: [UInt8]) {
        guard let current = currentLink, var engine = fileTransfer, !fileTransferFaults.silent else { return }
        let answer = engine.receive(value, at: recordingTime)
        fileTransfer = engine
        let frames: [PSFTPFrame]
        switch answer {
        case .none: return
        case .code(let code): frames = [PSFTPFrame(isContinuation: false, sequenceNumber: 0, content: .code(code))]
        case .message(let bytes):
            guard let split = try? PSFTPFrame.split(bytes, mtu: current.link.mtu - 3) else { return }
            frames = split
        }
        let drop = fileTransferFaults.dropAfterFrames
        Task {
            try? await time.sleep(for: Self.responseDelay)
            guard self.isCurrent(current.id) else { return }
            if drop > 0, frames.count > drop {
                _ = await current.link.notify(Self.fileTransferMTUUUID, values: frames.prefix(drop).map { $0.encode() })
                await current.link.disconnect()
                return
            }
            _ = await current.link.notify(Self.fileTransferMTUUUID, values: frames.map { $0.encode() })
        }
    }

    /// What the strap holds, for tests: the recording's identifier, whether it runs, how many samples so far.
    func recordingInspection() -> [String: String] {
        guard let engine = fileTransfer else { return [:] }
        guard var recording = engine.recording else { return ["recording": "none"] }
        recording.record(through: recordingTime)
        return ["recording": recording.isRecording ? "running" : "stored", "recording_identifier": recording.identifier,
                "recorded_samples": "\(recording.sampleCount)"]
    }
}
