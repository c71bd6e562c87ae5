import Wearables
import Firmware

/// A simulated Legacy DFU bootloader (SDK 11): `LegacyDFUTarget`, which checks the legacy init packet (device type,
/// revision, SoftDevice list) and validates the image against its CRC-16, with the faults injected. A link drop
/// abandons the transfer (Legacy DFU cannot resume); the bootloader stays, and the next transfer starts from Start.
///
/// Reset (0x06, what Nordic's library writes after any error) restarts the device into the application it had: the
/// simulation models a dual-bank update, where the old image stays valid until the new one is activated.
struct LegacyDFUBootloaderEngine: SimulatedDFUBootloaderEngine {
    private var target: LegacyDFUTarget
    var faults: SimulatedDFUFaults
    var bytesReceived = 0

    var versionValue: [UInt8]? { target.versionValue }

    init(faults: SimulatedDFUFaults, bootloader: SimulatedDFUOptions.LegacyBootloader = .sdk11) {
        self.init(faults: faults, configuration: Self.configuration(bootloader))
    }

    /// A target with a device's own limits (InfiniTime's device type and image slot).
    init(faults: SimulatedDFUFaults, configuration: LegacyDFUTarget.Configuration) {
        self.faults = faults
        target = LegacyDFUTarget(configuration: configuration)
        if let fraction = faults.dropAt { target.addProgressMark(fraction) }
    }

    static func configuration(_ bootloader: SimulatedDFUOptions.LegacyBootloader) -> LegacyDFUTarget.Configuration {
        var configuration = LegacyDFUTarget.Configuration()
        configuration.speaksDFUVersion1 = bootloader == .sdk6
        return configuration
    }

    var imageBytesHeld: Int { target.receivedImageBytes }

    /// Armed at the first Validate, so a transfer that never gets there leaves it for the next one.
    mutating func armRejection(before request: [UInt8]) {
        guard let code = faults.reject, (try? LegacyDFURequest(decoding: request)) == .validate else { return }
        target.rejectNextValidation(LegacyDFUStatus(rawValue: UInt8(truncatingIfNeeded: code)))
        faults.reject = nil
    }

    mutating func targetControlPoint(_ value: [UInt8]) -> [LegacyDFUTargetOutput] { target.writeControlPoint(value) }

    mutating func targetPacket(_ value: [UInt8]) -> [LegacyDFUTargetOutput] { target.writePacket(value) }

    mutating func linkDropped() { target.linkDropped() }

    static func notification(in output: LegacyDFUTargetOutput) -> [UInt8]? {
        if case .notify(let bytes) = output { bytes } else { nil }
    }

    static func isReset(_ output: LegacyDFUTargetOutput) -> Bool { output == .reset }

    /// The target is fresh for each stay in the bootloader, so an installed image is this stay's. A DFU v1 init
    /// packet may be a bare CRC-16, which carries no version.
    var installed: SimulatedDFUInstall? {
        guard let image = target.installedImage, let sizes = target.installedSizes else { return nil }
        return SimulatedDFUInstall(
            imageSize: image.count,
            version: target.installedInitPacket?.applicationVersion ?? SimulatedFirmwareRevision.unversioned,
            isApplication: sizes.application > 0, containsSoftDevice: sizes.softDevice > 0)
    }
}
