import BlueZ
import DBus
import Wearables
import SimulatedWearables

/// Faults and device-side events from the scenario's timeline and the control interface.
extension SimulatedBluetoothDaemon {
    func apply(_ action: SimulatorAction) async throws(BlueZErrorReply) {
        logger.info("action: \(action)")
        switch action {
        case .dropLink(let address):
            let device = try simulatedDevice(address)
            guard device.link.currentLink != nil else { throw ControlError.notConnected(address) }
            await linkDown(device, cause: .remote)
        case .refuseConnects(let address, let count, let error):
            try simulatedDevice(address).faults.refuseConnects(count, with: error)
        case .setAdvertising(let address, let on):
            setAdvertising(try simulatedDevice(address), on)
        case .setLatency(let address, let latency):
            if let address { try simulatedDevice(address).faults.latency = latency } else { adapterFaults.latency = latency }
        case .failNextCall(let address, let method, let error):
            if let address {
                try simulatedDevice(address).faults.failNextCall(of: method, with: error)
            } else {
                adapterFaults.failNextCall(of: method, with: error)
            }
        case .setPowered(let on):
            guard !radioFaults.adapterRemoved else { throw ControlError.adapterRemoved }
            await setPowered(on)
        case .deviceEvent(let address, let event):
            let device = try simulatedDevice(address)
            let handled = await device.peripheral.handle(event, link: device.linkObject)
            guard handled else { throw ControlError.eventNotSupported(event, address) }
        case .setRSSI(let address, let rssi):
            try simulatedDevice(address).rssi = rssi
        case .setRSSINoise(let address, let amplitude, let seed):
            try simulatedDevice(address).rssiNoise = amplitude == 0 ? nil : RSSINoise(amplitude: amplitude, seed: seed)
        case .deafenScanner(let cure):
            try deafenScanner(clearedBy: cure)
        case .stickDiscovery:
            try stickDiscovery()
        case .removeAdapter:
            try await removeAdapter()
        case .restoreAdapter:
            try restoreAdapter()
        }
    }

    /// The device starts or stops advertising; a Connect waiting for it to advertise goes ahead.
    func setAdvertising(_ device: SimulatedDevice, _ on: Bool) {
        device.advertising = on
        guard on else { return }
        device.nextSighting = .now
        if let attempt = device.attemptAwaitingAdvertising {
            let address = device.address
            schedule(after: device.settings.connectDelay) { daemon in daemon.attemptTimerFired(address, attempt: attempt) }
        }
    }

    /// The peripheral at `host` switched its radio (`SimulatedCompanion.radio`): the one going off the air stops
    /// advertising and loses its link, as a device that resets does; the other starts advertising.
    func switchRadio(host hostAddress: BluetoothAddress, to radio: SimulatedRadio) async {
        guard let host = devices[hostAddress], let address = host.companionAddress, let companion = devices[address] else { return }
        let (leaving, arriving) = radio == .companion ? (host, companion) : (companion, host)
        logger.info("\(hostAddress) switches its radio to \(radio == .companion ? "its \(companion.kindName) at \(address)" : "itself")")
        setAdvertising(leaving, false)
        if leaving.link.currentLink != nil { await linkDown(leaving, cause: .remote) }
        setAdvertising(arriving, true)
    }

    /// Every value written to `characteristic` that reached the device, oldest first.
    func received(_ address: BluetoothAddress, characteristic: BluetoothUUID) throws(BlueZErrorReply) -> [[UInt8]] {
        try simulatedDevice(address).received[characteristic] ?? []
    }

    /// What the device shows or counted that a central cannot read (`SimulatedPeripheral.inspect()`).
    func inspect(_ address: BluetoothAddress) async throws(BlueZErrorReply) -> [String: String] {
        let device = try simulatedDevice(address)
        return await device.peripheral.inspect()
    }

    /// Address, kind, and the link state of every simulated device, for `wear2mqtt-sim control list`.
    func deviceSummaries() -> [(address: String, kind: String, state: String)] {
        devices.values.sorted { $0.address < $1.address }.map { device in
            let state: String
            switch device.link.state {
            case .disconnected: state = device.advertising ? "advertising" : "silent"
            case .connecting: state = "connecting"
            case .connected: state = device.servicesResolved ? "connected" : "resolving"
            case .disconnecting: state = "disconnecting"
            }
            return (device.address.description, device.kindName, state)
        }
    }
}
