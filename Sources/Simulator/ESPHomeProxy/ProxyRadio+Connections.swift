import Foundation
import ESPHome

/// `BluetoothDeviceRequest`: connect, disconnect, pair, unpair, clear cache, as ESPHome's `bluetooth_proxy` answers
/// them (`bluetooth_device_request` in bluetooth_proxy.cpp).
extension ProxyRadio {
    func deviceRequest(_ request: BluetoothDeviceRequest) {
        let address = request.address
        switch request.requestType {
        case .connectV3WithCache, .connectV3WithoutCache:
            connect(address, withCache: request.requestType == .connectV3WithCache, hasAddressType: request.hasAddressType_p)
        case .disconnect:
            guard state.value.phases[address] != nil else {
                publishConnection(address, connected: false)
                publishSlots()
                return
            }
            endLink(address)
            publishConnection(address, connected: false, error: ProxyErrorCode.terminatedLocally)
            publishSlots()
        case .pair:
            // The ESP32 pairs with IO capability "none": Just Works, whatever the device would offer a phone.
            var response = BluetoothDevicePairingResponse()
            response.address = address
            if case .connected? = state.value.phases[address] {
                response.paired = true
            } else {
                response.error = ProxyErrorCode.notConnected
            }
            publish(APIMessage(.bluetoothDevicePairingResponse, response))
        case .unpair:
            var response = BluetoothDeviceUnpairingResponse()
            response.address = address
            response.success = true
            publish(APIMessage(.bluetoothDeviceUnpairingResponse, response))
        case .clearCache:
            var response = BluetoothDeviceClearCacheResponse()
            response.address = address
            response.success = true
            publish(APIMessage(.bluetoothDeviceClearCacheResponse, response))
        case .connect, .UNRECOGNIZED:
            // ESPHome removed the v1 connection: "V1 connections removed", answered as not connected.
            publishConnection(address, connected: false)
        }
    }

    private func connect(_ address: UInt64, withCache: Bool, hasAddressType: Bool) {
        // Without a subscriber ESPHome tears the attempt down on its next loop and tells nobody.
        guard state.value.subscriber != nil else { return }
        switch state.value.slots.reserve(address) {
        case .full:
            // "No free connections available": not connected, error 0, the slots unchanged (so not re-sent).
            publishConnection(address, connected: false)
        case .alreadyHeld:
            // Already connected: said again; still connecting: ignored, as ESPHome ignores it.
            if case .connected(let connected)? = state.value.phases[address] {
                publishConnection(address, connected: true, mtu: connected.link.mtu)
                publishSlots()
            }
        case .reserved:
            guard hasAddressType else {
                state.value.slots.release(address)
                publishConnection(address, connected: false)
                return
            }
            state.value.generation += 1
            let generation = state.value.generation
            state.value.phases[address] = .connecting(generation: generation, withCache: withCache)
            publishSlots()
            // Every attempt gives up after the timeout unless its link came up first: a device that does not advertise
            // connectable packets, or that is out of range when its link would come up (`linkUp`), never answers.
            loop.schedule(at: .now + settings.connectTimeout) { [self] in failConnecting(address, generation: generation) }
            guard let device = state.value.devices[address], device.isConnectable else { return }
            // Without the client's cache the proxy discovers the services before it says connected.
            let delay = device.settings.connectDelay + (withCache ? .zero : device.settings.serviceDiscoveryTime)
            loop.schedule(at: .now + delay) { [self] in linkUp(address, generation: generation) }
        }
    }

    private func failConnecting(_ address: UInt64, generation: Int) {
        guard case .connecting(generation, _)? = state.value.phases[address] else { return }
        state.value.phases[address] = nil
        state.value.slots.release(address)
        publishConnection(address, connected: false, error: ProxyErrorCode.failedToEstablish)
        publishSlots()
    }

    private func linkUp(_ address: UInt64, generation: Int) {
        guard case .connecting(generation, let withCache)? = state.value.phases[address],
              let device = state.value.devices[address], state.value.inRange else { return }
        let mtu = min(settings.localMTU, device.settings.mtu)
        let link = ProxyLink(device: device, mtu: mtu, notification: { [self] handle, value in
            loop.execute { [self] in forward(address, generation: generation, handle: handle, value: value) }
        }, hangUp: { [self] in
            loop.execute { [self] in lost(address, generation: generation) }
        })
        state.value.phases[address] = .connected(Connected(link: link, withCache: withCache, generation: generation))
        link.start()
        publishConnection(address, connected: true, mtu: mtu)
        publishSlots()
    }

    /// The peripheral hung up.
    private func lost(_ address: UInt64, generation: Int) {
        guard case .connected(let connected)? = state.value.phases[address], connected.generation == generation else { return }
        endLink(address)
        publishConnection(address, connected: false, error: ProxyErrorCode.terminatedByPeer)
        publishSlots()
    }

    /// Ends the link or the attempt to `address` and frees its slot; says nothing (the caller says what ended it).
    func endLink(_ address: UInt64) {
        guard let phase = state.value.phases.removeValue(forKey: address) else { return }
        state.value.slots.release(address)
        if case .connected(let connected) = phase { connected.link.end() }
    }

    /// A notification of the link: passed on when the client registered the handle (ESP-IDF drops the others).
    private func forward(_ address: UInt64, generation: Int, handle: UInt16, value: [UInt8]) {
        guard case .connected(let connected)? = state.value.phases[address], connected.generation == generation,
              connected.registered.contains(handle) else { return }
        var response = BluetoothGATTNotifyDataResponse()
        response.address = address
        response.handle = UInt32(handle)
        response.data = .init(value)
        publish(APIMessage(.bluetoothGATTNotifyDataResponse, response))
    }
}
