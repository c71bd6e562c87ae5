import Wearables

/// Which of a peripheral and its companion is on the air.
public enum SimulatedRadio: String, Sendable, Equatable {
    /// The peripheral itself, at its own address: what is on the air when the simulation starts.
    case primary
    /// The companion, at the peripheral's address plus the companion's offset.
    case companion
}

/// A second device that a simulated peripheral sometimes *is*: the same chip under another address, with its own
/// advertisement, GATT table and behaviour. An nRF5 application that reboots into its DFU bootloader is the model:
/// the application stops advertising and drops its link, and the bootloader advertises under the next address
/// until it resets back into the application.
///
/// The peripheral decides when to switch and says so on `radio`; the host follows: it stops the one going off the
/// air (advertising stops, a connected central loses the link) and starts the other advertising. The host knows
/// nothing of why. Until the companion first advertises, a central cannot know it exists (BlueZ only creates a
/// device object for what it saw advertising), so a host must not show it before.
///
/// Only one task may iterate `radio`: the host's. Peripheral mode (one device served by a real adapter) does not
/// serve companions.
public struct SimulatedCompanion: Sendable {
    public let peripheral: any SimulatedPeripheral
    /// What the companion is, for listings (`secure_dfu_bootloader`).
    public let kind: String
    /// Added to the last byte of the peripheral's address, wrapping without carrying into the byte before
    /// (`…:FF` + 1 is `…:00`), as an nRF5 bootloader derives its address (`SecureDFUBootloaderAddress`).
    public let addressOffset: UInt8
    /// Every switch, in order; the primary is on the air until the first one.
    public let radio: AsyncStream<SimulatedRadio>

    public init(peripheral: any SimulatedPeripheral, kind: String, addressOffset: UInt8,
                radio: AsyncStream<SimulatedRadio>) {
        self.peripheral = peripheral
        self.kind = kind
        self.addressOffset = addressOffset
        self.radio = radio
    }
}
