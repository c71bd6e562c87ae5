import Wearables
import Firmware

/// The bootloader of a simulated Nordic device as the peripheral its host serves at the companion address: it
/// advertises "DfuTarg" with its DFU service and carries reads, writes and subscriptions to the device's
/// `SimulatedNordicDFU`. It keeps no state of its own: the transfer outlives a link drop because the device holds it.
final class SimulatedDFUBootloader: SimulatedPeripheral {
    let advertisement: SimulatedAdvertisement
    let services: [SimulatedService]
    let deviceName = SimulatedDFUGATT.bootloaderName
    private let dfu: SimulatedNordicDFU

    init(dfu: SimulatedNordicDFU, options: SimulatedDFUOptions, rssi: Int) {
        self.dfu = dfu
        advertisement = SimulatedDFUGATT.bootloaderAdvertisement(options.variant, rssi: rssi)
        services = SimulatedDFUGATT.bootloaderServices(options)
    }

    func run(on link: any PeripheralLink) async {
        await dfu.run(.bootloader, on: link)
    }

    func read(_ characteristic: BluetoothUUID) async throws(ATTError) -> [UInt8] {
        try await dfu.read(characteristic, in: .bootloader)
    }

    func write(_ characteristic: BluetoothUUID, value: [UInt8], kind: WriteKind) async throws(ATTError) {
        try await dfu.write(characteristic, value: value, in: .bootloader)
    }

    func subscriptionChanged(_ characteristic: BluetoothUUID, isSubscribed: Bool) async {
        await dfu.subscriptionChanged(characteristic, isSubscribed: isSubscribed, in: .bootloader)
    }

    func handle(_ event: DeviceEvent, link: (any PeripheralLink)?) async -> Bool { false }

    /// The device's DFU state (`SimulatedNordicDFU.inspect()`), the same as its application shows.
    func inspect() async -> [String: String] { await dfu.inspect() }
}
