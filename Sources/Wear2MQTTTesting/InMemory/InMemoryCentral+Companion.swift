import BlueZ
import SimulatedWearables

/// A peripheral's companion (its DFU bootloader, `SimulatedCompanion`) hosted beside it: silent and unknown until
/// the peripheral switches its radio to it, then in range under its own address while the peripheral is out of it,
/// and back again — what the simulator process does, without its advertising intervals.
extension InMemoryCentral {
    func host(_ companion: SimulatedCompanion, of hostAddress: BluetoothAddress) {
        guard let text = Self.companionAddress(of: hostAddress.rawValue, offset: companion.addressOffset),
              let address = BluetoothAddress(text) else { return }
        add(companion.peripheral, address: address, known: false)
        state.withLock { $0.hosted[InMemoryObjects.devicePath(address)]?.inRange = false }
        let follow = Task { [weak self] in
            for await radio in companion.radio {
                guard let self else { return }
                let (leaving, arriving) = radio == .companion ? (hostAddress, address) : (address, hostAddress)
                await self.setInRange(leaving, false)
                // BlueZ learns of the companion when discovery first sees it advertise.
                await self.setInRange(arriving, true)
            }
        }
        state.withLock { $0.radios.append(follow) }
    }

    /// The peripheral's address with `offset` added to its last byte, wrapping as an nRF5 bootloader does.
    static func companionAddress(of address: String, offset: UInt8) -> String? {
        guard let last = address.split(separator: ":").last, let byte = UInt8(last, radix: 16) else { return nil }
        let shifted = byte &+ offset
        return address.dropLast(2) + (shifted < 0x10 ? "0" : "") + String(shifted, radix: 16, uppercase: true)
    }
}
