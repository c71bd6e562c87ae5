import Firmware
import Synchronization
import Wearables

/// A simulated Secure DFU bootloader: `SecureDFUTarget` with the init packet checked by `initCheck(_:)`, and the
/// faults injected at the moment they apply. Its state survives link drops (the target's does), so a central that
/// reconnects resumes from what Select reports.
struct SecureDFUBootloaderEngine: SimulatedDFUBootloaderEngine {
    private var target: SecureDFUTarget
    /// The init packet the target accepted, recorded by its check (which runs inside `writeControlPoint`), for the
    /// version of the image it installs.
    private let accepted: AcceptedInitPacket
    var faults: SimulatedDFUFaults
    var bytesReceived = 0

    var versionValue: [UInt8]? { nil }

    init(faults: SimulatedDFUFaults) {
        let accepted = AcceptedInitPacket()
        self.accepted = accepted
        self.faults = faults
        target = SecureDFUTarget { bytes in
            let (check, packet) = Self.initCheck(bytes)
            accepted.packet.withLock { $0 = packet }
            return check
        }
        if let fraction = faults.dropAt { target.addProgressMark(fraction) }
        if faults.executeBusy { target.answerFinalExecuteOnce(.invalidObject) }
        target.corruptNextDataObjects(faults.corruptObjects)
    }

    /// What the simulated bootloader makes of an init packet, following the SDK 15 `nrf_dfu_validation.c` where it
    /// decides:
    /// - not a `Packet` protobuf with an init command: `INVALID_OBJECT` (0x05), the SDK's answer to an init packet
    ///   that does not decode;
    /// - an external application, or no image size for its type: `EXT_ERROR` + `INIT_COMMAND_INVALID` (`fw_type_ok`
    ///   of a bootloader built without `NRF_DFU_SUPPORTS_EXTERNAL_APP`; applications, SoftDevices, bootloaders and
    ///   SoftDevice+bootloader images are taken);
    /// - otherwise the image must be the announced size, and after the last object its digest must match
    ///   (`imageDigestMatches`), else the target answers `VERIFICATION_FAILED`.
    ///
    /// Not checked: the signature (no key: the simulation has no device key pair, and nrfutil would sign with one),
    /// hardware version, SoftDevice requirement and firmware version (no downgrade protection), so a test may
    /// install any version.
    static func initCheck(_ bytes: [UInt8]) -> (DFUInitCheck, DFUInitPacket?) {
        guard let packet = try? DFUInitPacket(decoding: bytes) else { return (.rejected(.invalidObject), nil) }
        guard packet.firmwareType != .externalApplication, packet.expectedImageSize > 0 else {
            return (.rejected(.initCommandInvalid), nil)
        }
        return (.accepted(imageSize: packet.expectedImageSize, verify: { packet.imageDigestMatches($0) }), packet)
    }

    var imageBytesHeld: Int { target.receivedImageBytes }

    /// The rejection is armed when the first data object is created, so it answers that object's Execute.
    mutating func armRejection(before request: [UInt8]) {
        guard let code = faults.reject, case .create(.data, _)? = try? SecureDFURequest(decoding: request) else { return }
        let rejection = SimulatedDFUFaults.secureRejection(code)
        target.rejectNextObject(result: rejection.result, extended: rejection.extended)
        faults.reject = nil
    }

    mutating func targetControlPoint(_ value: [UInt8]) -> [SecureDFUTargetOutput] {
        defer { noteFiredFaults() }
        return target.writeControlPoint(value)
    }

    mutating func targetPacket(_ value: [UInt8]) -> [SecureDFUTargetOutput] { target.writePacket(value) }

    /// The busy Execute and the damaged objects, once the target used them up, are no longer handed on.
    private mutating func noteFiredFaults() {
        faults.executeBusy = target.finalExecuteAnswerPending
        faults.corruptObjects = target.dataObjectsStillToCorrupt
    }

    mutating func linkDropped() {}

    static func notification(in output: SecureDFUTargetOutput) -> [UInt8]? {
        if case .notify(let bytes) = output { bytes } else { nil }
    }

    static func isReset(_ output: SecureDFUTargetOutput) -> Bool { output == .reset }

    var installed: SimulatedDFUInstall? {
        guard let image = target.installedImage else { return nil }
        let packet = accepted.packet.withLock { $0 }
        let type = packet?.firmwareType ?? .application
        return SimulatedDFUInstall(
            imageSize: image.count, version: packet?.firmwareVersion ?? SimulatedFirmwareRevision.unversioned,
            isApplication: type == .application || type == .externalApplication,
            containsSoftDevice: type == .softDevice || type == .softDeviceBootloader)
    }
}

/// Shared between the engine and its target's check closure.
private final class AcceptedInitPacket: Sendable {
    let packet = Mutex<DFUInitPacket?>(nil)
}
