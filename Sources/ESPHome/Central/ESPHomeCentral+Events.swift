import BlueZ
import DBus

extension ESPHomeCentral {
    /// What the proxy client reports, on the loop thread: the proxy up or down, and every message of its radio.
    func handle(_ event: ProxyClient.Event) {
        switch event {
        case .ready(let identity):
            withState { $0.identity = identity }
            logger.info("Bluetooth proxy connected", metadata: [
                "radio": "\(name)", "node": "\(identity.name)", "esphome": "\(identity.esphomeVersion)",
                "features": "\(identity.features.rawValue)",
            ])
            let address = BluetoothAddress(identity.bluetoothMacAddress)?.rawValue ?? BluetoothAddress(identity.macAddress)?.rawValue ?? "00:00:00:00:00:00"
            apply { $0.propertiesChanged(path: adapterPath, interface: BlueZNames.adapter, changed: ["Powered": true, "Address": .string(address)]) }
            // Raw advertisements, batched, for the whole connection: they carry every RSSI, and a proxy answers
            // connection and GATT requests only to the client subscribed to them.
            subscribeAdvertisements()
            sendFreeSlotsSubscription()
        case .disconnected(let reason, let retryIn):
            logger.warning("Bluetooth proxy not connected", metadata: ["radio": "\(name)", "reason": "\(reason)", "retry_in": "\(retryIn)"])
            let (connected, waiters) = withState { state -> ([UInt64], [CheckedContinuation<ProxyWaiters.Answer, Never>]) in
                state.identity = nil
                state.sightings = [:]
                state.slots = (0, 0)
                return (Array(state.gatt.keys), state.waiters.takeAll(address: nil))
            }
            for waiter in waiters { waiter.resume(returning: .failure(.adapterUnavailable("the proxy \(name) went away"))) }
            for address in connected { linkLost(address) }
            apply { $0.propertiesChanged(path: adapterPath, interface: BlueZNames.adapter, changed: ["Powered": false]) }
        case .message(let message):
            receive(message)
        }
    }

    /// Raw advertisements, batched (flags 1), for the whole connection.
    func subscribeAdvertisements() {
        var request = SubscribeBluetoothLEAdvertisementsRequest()
        request.flags = 1
        clientSend(APIMessage(.subscribeBluetoothLEAdvertisementsRequest, request))
    }

    private func receive(_ message: APIMessage) {
        switch APIMessageType(rawValue: message.type) {
        case .bluetoothLERawAdvertisementsResponse?:
            guard let batch = message.decoded(as: BluetoothLERawAdvertisementsResponse.self) else { return }
            for advertisement in batch.advertisements { advertised(advertisement) }
        case .bluetoothDeviceConnectionResponse?:
            guard let response = message.decoded(as: BluetoothDeviceConnectionResponse.self) else { return }
            if response.connected {
                resume(.connect(response.address), .connected(mtu: Int(response.mtu)))
            } else {
                // Error 0 answering a connect is ESPHome's "no free connections available".
                let failure: BlueZError = response.error == 0
                    ? .connectionLimit("the proxy \(name) has no free connection slot")
                    : .failed(name: BlueZErrorName.failed, message: "the proxy could not connect (error \(response.error))")
                linkLost(response.address, connectFailure: failure)
            }
        case .bluetoothGATTGetServicesResponse?:
            guard let response = message.decoded(as: BluetoothGATTGetServicesResponse.self) else { return }
            withState { $0.listing[response.address, default: []] += response.services }
        case .bluetoothGATTGetServicesDoneResponse?:
            guard let response = message.decoded(as: BluetoothGATTGetServicesDoneResponse.self) else { return }
            let services = withState { $0.listing.removeValue(forKey: response.address) ?? [] }
            resume(.services(response.address), .services(services))
        case .bluetoothGATTReadResponse?:
            guard let response = message.decoded(as: BluetoothGATTReadResponse.self) else { return }
            resume(.read(response.address, response.handle), .bytes(Array(response.data)))
        case .bluetoothGATTWriteResponse?:
            guard let response = message.decoded(as: BluetoothGATTWriteResponse.self) else { return }
            resume(.write(response.address, response.handle), .done)
        case .bluetoothGATTNotifyResponse?:
            guard let response = message.decoded(as: BluetoothGATTNotifyResponse.self) else { return }
            resume(.notify(response.address, response.handle), .done)
        case .bluetoothGATTErrorResponse?:
            guard let response = message.decoded(as: BluetoothGATTErrorResponse.self) else { return }
            let error = BlueZError.failed(name: BlueZErrorName.failed, message: "the device answered ATT error \(response.error)")
            for waiter in takeWaiters(address: response.address, handle: response.handle) { waiter.resume(returning: .failure(error)) }
        case .bluetoothGATTNotifyDataResponse?:
            guard let data = message.decoded(as: BluetoothGATTNotifyDataResponse.self),
                  let handler = withState({ $0.subscriptions[data.address]?[data.handle]?.handler }) else { return }
            handler(Array(data.data))
        case .bluetoothDevicePairingResponse?:
            guard let response = message.decoded(as: BluetoothDevicePairingResponse.self) else { return }
            resume(.pair(response.address), response.paired ? .done
                   : .failure(.authenticationFailed("the proxy could not pair (error \(response.error))")))
        case .bluetoothConnectionsFreeResponse?:
            guard let response = message.decoded(as: BluetoothConnectionsFreeResponse.self) else { return }
            let waiters = withState { state in
                state.slots = (Int(response.free), Int(response.limit))
                return response.free > 0 ? state.waiters.takeSlotWaiters() : []
            }
            for waiter in waiters { waiter.resume(returning: .done) }
        default:
            break
        }
    }

    /// A device heard: its object is made the first time (a proxy listens all the time, so unlike BlueZ it needs no
    /// discovery for that: a device only a proxy hears can be found whenever a session looks), then its signal and data
    /// are updated. At most `devicesLimit` unconnected devices are kept; the one heard longest ago goes first.
    private func advertised(_ advertisement: BluetoothLERawAdvertisement) {
        guard let address = ProxyAddress.address(advertisement.address) else { return }
        let device = devicePath(address)
        let data = AdvertisingData(decoding: Array(advertisement.data))
        let known = withState { state -> Bool in
            state.advertisementsHeard &+= 1
            let now = ContinuousClock.now
            // Smoothed: one advertisement's fading (a few dB either way) must not decide which radio a device uses.
            var rssi = Int(advertisement.rssi)
            if let last = state.sightings[advertisement.address], now - last.at < .seconds(30) {
                rssi = last.rssi + Int((Double(rssi - last.rssi) * Self.rssiSmoothing).rounded())
            }
            state.sightings[advertisement.address] = (rssi, now)
            if state.sightings.count > Self.sightingsLimit,
               let oldest = state.sightings.min(by: { $0.value.at < $1.value.at })?.key {
                state.sightings.removeValue(forKey: oldest)
            }
            return state.model.devices[device] != nil
        }
        var values: [String: DBusValue] = ["RSSI": .int16(Int16(clamping: advertisement.rssi))]
        if !data.manufacturerData.isEmpty {
            values["ManufacturerData"] = .dictionary(keySignature: "q", valueSignature: "v", data.manufacturerData.sorted { $0.key < $1.key }.map {
                DBusValue.DictionaryEntry(.uint16($0.key), .variant(.bytes($0.value)))
            })
        }
        if !data.serviceData.isEmpty {
            values["ServiceData"] = .dictionary(keySignature: "s", valueSignature: "v", data.serviceData.sorted { $0.key < $1.key }.map {
                DBusValue.DictionaryEntry(.string($0.key), .variant(.bytes($0.value)))
            })
        }
        if known {
            apply { $0.propertiesChanged(path: device, interface: BlueZNames.device, changed: values) }
            return
        }
        values["Address"] = .string(address.rawValue)
        values["AddressType"] = advertisement.addressType == 0 ? "public" : "random"
        values["Adapter"] = .objectPath(adapterPath)
        for flag in ["Paired", "Bonded", "Trusted", "Blocked", "Connected", "ServicesResolved"] { values[flag] = false }
        values["UUIDs"] = .strings(data.serviceUUIDs)
        if let name = data.localName {
            values["Name"] = .string(name)
            values["Alias"] = .string(name)
        }
        if let appearance = data.appearance { values["Appearance"] = .uint16(appearance) }
        if let txPower = data.txPower { values["TxPower"] = .int16(Int16(txPower)) }
        apply { $0.interfacesAdded(path: device, interfaces: [BlueZNames.device: values]) }
        evictIfCrowded()
    }

    /// Keeps the model to `devicesLimit` unconnected devices in busy places (a city flat hears hundreds).
    private func evictIfCrowded() {
        let stale = withState { state -> ObjectPath? in
            let idle = state.model.devices.values.filter { !$0.connected }
            guard idle.count > Self.devicesLimit else { return nil }
            let sightings = state.sightings
            func heardAt(_ info: BlueZ.DeviceInfo) -> ContinuousClock.Instant {
                info.address.flatMap { sightings[ProxyAddress.uint64($0)]?.at } ?? .now - .seconds(86_400)
            }
            return idle.min { heardAt($0) < heardAt($1) }?.path
        }
        guard let stale else { return }
        apply { $0.interfacesRemoved(path: stale, interfaces: [BlueZNames.device]) }
    }

    private func sendFreeSlotsSubscription() {
        clientSend(APIMessage(.subscribeBluetoothConnectionsFreeRequest))
    }
}
