import Wearables

/// What a pure DFU client asks of whoever carries its bytes, the same for Secure and Legacy DFU; `Failure` is the
/// protocol's own error.
public enum DFUClientAction<Failure: DFUTransferFailure>: Equatable, Sendable {
    /// Write to the control point, with response.
    case writeControl([UInt8])
    /// Write to the packet characteristic, without response.
    case writePacket([UInt8])
    /// Wait for the next control point notification and pass it to the client's `handle(_:)`.
    case waitForNotification
    /// The bootloader took the image (Secure: the last Execute succeeded; Legacy: Activate and Reset was written);
    /// it now resets into the new firmware and drops the link.
    case finished
    case failed(Failure)
}

/// Why a DFU transfer stopped, as the MQTT contract's `DFU_FAILED` with the bootloader's code.
public protocol DFUTransferFailure: Error, Equatable, Sendable {
    var commandError: CommandError { get }
}

extension SecureDFUError: DFUTransferFailure {}
extension LegacyDFUError: DFUTransferFailure {}
