import Wearables
import Firmware

/// What a simulated bootloader does in answer to a write, whichever protocol it speaks.
public enum SimulatedDFUBootloaderOutput: Equatable, Sendable {
    /// Notify these bytes on the control point.
    case notify([UInt8])
    /// The injected fault: the bootloader drops the link now and keeps advertising.
    case dropLink
    /// The bootloader resets: into a newly installed image, or (nil) back into the application it had.
    case reset(installed: SimulatedDFUInstall?)
}

/// An image a bootloader installed.
public struct SimulatedDFUInstall: Equatable, Sendable {
    public var imageSize: Int
    /// The init packet's firmware (Secure) or application (Legacy) version, packed as nrfutil packs it.
    public var version: UInt32
    /// The image is the application (not a SoftDevice and/or bootloader): its version becomes the device's.
    public var isApplication: Bool
    /// The image carries a SoftDevice. *Modeled* on the SDK, which invalidates the application when it replaces
    /// the SoftDevice (the application must be sent after it): the device restarts into its bootloader.
    public var containsSoftDevice: Bool

    public init(imageSize: Int, version: UInt32, isApplication: Bool = true, containsSoftDevice: Bool = false) {
        self.imageSize = imageSize
        self.version = version
        self.isApplication = isApplication
        self.containsSoftDevice = containsSoftDevice
    }
}

/// The bootloader half of a simulated Nordic device, as a value: the pure DFU target of its protocol, with the
/// device's checks wired in and the faults of `SimulatedDFUOptions` injected. One lives from the moment the
/// device enters its bootloader until it resets; link drops in between are reported with `linkDropped()`.
///
/// An engine supplies its target's two writes, how to read its outputs, what it installed, and when to arm its
/// injected rejection; the extension below does the rest alike for both protocols.
protocol SimulatedDFUBootloaderEngine: Sendable {
    associatedtype TargetOutput

    /// Faults not injected yet: handed on to the next engine when this one resets.
    var faults: SimulatedDFUFaults { get set }
    /// Image bytes received over the air, resent ones counted again.
    var bytesReceived: Int { get set }
    /// What a read of the version characteristic answers (Legacy's 0x1534); nil when there is none.
    var versionValue: [UInt8]? { get }
    /// Image bytes the target holds now (it may rewind).
    var imageBytesHeld: Int { get }

    /// Arms the injected rejection if `request` is the one it answers.
    mutating func armRejection(before request: [UInt8])
    mutating func targetControlPoint(_ value: [UInt8]) -> [TargetOutput]
    mutating func targetPacket(_ value: [UInt8]) -> [TargetOutput]
    /// The bytes to notify, when `output` is a notification.
    static func notification(in output: TargetOutput) -> [UInt8]?
    /// Whether `output` is the target's reset (the other outputs are notifications and the `dfu_drop_at` mark).
    static func isReset(_ output: TargetOutput) -> Bool
    /// What the target installed before its reset; nil when it resets without a new image.
    var installed: SimulatedDFUInstall? { get }
    /// The central went away.
    mutating func linkDropped()
}

extension SimulatedDFUBootloaderEngine {
    mutating func writeControlPoint(_ value: [UInt8]) -> [SimulatedDFUBootloaderOutput] {
        armRejection(before: value)
        return targetControlPoint(value).map { output($0) }
    }

    mutating func writePacket(_ value: [UInt8]) -> [SimulatedDFUBootloaderOutput] {
        let before = imageBytesHeld
        let outputs = targetPacket(value)
        bytesReceived += max(0, imageBytesHeld - before)
        return outputs.map { output($0) }
    }

    private mutating func output(_ output: TargetOutput) -> SimulatedDFUBootloaderOutput {
        if let bytes = Self.notification(in: output) { return .notify(bytes) }
        if Self.isReset(output) { return .reset(installed: installed) }
        // The progress mark `dfu_drop_at` set: the fault fires.
        faults.dropAt = nil
        return .dropLink
    }
}
