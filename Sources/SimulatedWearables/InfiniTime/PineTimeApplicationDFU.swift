import Firmware
import Wearables

/// InfiniTime's Legacy DFU, served by the application itself (`DfuService.cpp`): no bootloader to reboot into, so
/// the service answers version 0x0008 and takes the whole transfer in place; Activate resets the watch into MCUBoot,
/// which swaps the new image in (*modeled*: the watch drops the link and comes back with the new Firmware
/// Revision). It reuses the simulated Legacy bootloader's engine, with InfiniTime's limits: device type 0x0052 (or
/// any, 0xFFFF, in the init packet), images up to MCUBoot's 475,136-byte slot.
///
/// Pure: `write` returns what to send; the peripheral delivers it after the write's response.
struct PineTimeApplicationDFU: Sendable {
    static let service = BluetoothUUID(constant: LegacyDFUUUID.service)
    static let controlPoint = BluetoothUUID(constant: LegacyDFUUUID.controlPoint)
    static let packet = BluetoothUUID(constant: LegacyDFUUUID.packet)
    static let version = BluetoothUUID(constant: LegacyDFUUUID.version)
    /// `DfuImage::maxSize`.
    static let maximumImageSize = 475_136
    /// The `--dev-type` InfiniTime's packages carry.
    static let deviceType: UInt16 = 0x0052

    static var configuration: LegacyDFUTarget.Configuration {
        var configuration = LegacyDFUTarget.Configuration()
        configuration.deviceType = deviceType
        configuration.maxImageSize = maximumImageSize
        return configuration
    }

    static var gattService: SimulatedService {
        SimulatedService(service, characteristics: [
            SimulatedCharacteristic(controlPoint, flags: [.write, .notify]),
            SimulatedCharacteristic(packet, flags: .writeWithoutResponse),
            SimulatedCharacteristic(version, flags: .read, initialValue: configuration.version.encoded()),
        ])
    }

    private var engine = LegacyDFUBootloaderEngine(faults: SimulatedDFUFaults(), configuration: configuration)
    private(set) var firmware: String
    private(set) var updates = 0

    init(firmware: String) { self.firmware = firmware }

    private var bytesReceivedBefore = 0
    /// Image bytes received over the air in every transfer so far, resent ones again.
    var bytesReceived: Int { bytesReceivedBefore + engine.bytesReceived }

    /// What a write to the control point or packet causes.
    mutating func write(_ characteristic: BluetoothUUID, _ value: [UInt8]) -> [SimulatedDFUOutgoing] {
        let outputs = characteristic == Self.controlPoint ? engine.writeControlPoint(value) : engine.writePacket(value)
        var outgoing: [SimulatedDFUOutgoing] = []
        for output in outputs {
            switch output {
            case .notify(let bytes): outgoing.append(.notify(Self.controlPoint, bytes))
            case .dropLink: outgoing.append(.hangUp)
            case .reset(let installed):
                if let installed, installed.isApplication {
                    updates += 1
                    firmware = SimulatedFirmwareRevision.afterInstalling(version: installed.version, current: firmware,
                                                                         installCount: updates)
                }
                bytesReceivedBefore += engine.bytesReceived
                engine = LegacyDFUBootloaderEngine(faults: SimulatedDFUFaults(), configuration: Self.configuration)
                outgoing.append(.hangUp)
            }
        }
        return outgoing
    }

    /// The transfer is abandoned with the link, as InfiniTime's is.
    mutating func linkDropped() { engine.linkDropped() }
}
