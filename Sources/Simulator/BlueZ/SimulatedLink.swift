import BlueZ
import Wearables
import SimulatedWearables

/// The peripheral's side of one LE link, handed to `SimulatedPeripheral.run(on:)`: every call goes to the daemon,
/// which drops it once this link has ended (a behaviour still running after a disconnection pushes into nothing).
final class SimulatedLink: PeripheralLink {
    let daemon: SimulatedBluetoothDaemon
    let address: BluetoothAddress
    let link: Int
    let mtu: Int

    init(daemon: SimulatedBluetoothDaemon, address: BluetoothAddress, link: Int, mtu: Int) {
        self.daemon = daemon
        self.address = address
        self.link = link
        self.mtu = mtu
    }

    func isSubscribed(_ characteristic: BluetoothUUID) async -> Bool {
        await daemon.isSubscribed(address, link: link, characteristic: characteristic)
    }

    func notify(_ characteristic: BluetoothUUID, value: [UInt8]) async -> Bool {
        await daemon.deliver(address, link: link, characteristic: characteristic, value: value, indication: false)
    }

    func notify(_ characteristic: BluetoothUUID, values: [[UInt8]]) async -> Int {
        await daemon.deliver(address, link: link, characteristic: characteristic, notifications: values)
    }

    func indicate(_ characteristic: BluetoothUUID, value: [UInt8]) async -> Bool {
        await daemon.deliver(address, link: link, characteristic: characteristic, value: value, indication: true)
    }

    func disconnect() async {
        await daemon.peripheralDisconnected(address, link: link)
    }
}
