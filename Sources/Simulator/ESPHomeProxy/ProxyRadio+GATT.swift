import ESPHome
import Foundation
import SimulatedWearables

/// GATT requests by handle, as ESPHome's `bluetooth_proxy` passes them to ESP-IDF and answers from its events: a
/// request for an address without a link gets `BluetoothGATTErrorResponse` with ESPHome's "not connected" (-1); a
/// request the peripheral refuses gets its ATT error code.
extension ProxyRadio {
    func gattRequest(_ message: APIMessage) {
        switch APIMessageType(rawValue: message.type) {
        case .bluetoothGATTGetServicesRequest?:
            guard let request = message.decoded(as: BluetoothGATTGetServicesRequest.self) else { return }
            services(request.address)
        case .bluetoothGATTReadRequest?:
            guard let request = message.decoded(as: BluetoothGATTReadRequest.self) else { return }
            read(request.address, request.handle)
        case .bluetoothGATTReadDescriptorRequest?:
            guard let request = message.decoded(as: BluetoothGATTReadDescriptorRequest.self) else { return }
            read(request.address, request.handle)
        case .bluetoothGATTWriteRequest?:
            guard let request = message.decoded(as: BluetoothGATTWriteRequest.self) else { return }
            write(request.address, request.handle, [UInt8](request.data), withResponse: request.response)
        case .bluetoothGATTWriteDescriptorRequest?:
            // ESPHome writes descriptors with a response, always.
            guard let request = message.decoded(as: BluetoothGATTWriteDescriptorRequest.self) else { return }
            write(request.address, request.handle, [UInt8](request.data), withResponse: true)
        case .bluetoothGATTNotifyRequest?:
            guard let request = message.decoded(as: BluetoothGATTNotifyRequest.self) else { return }
            notify(request.address, request.handle, enable: request.enable)
        default:
            // Not a Bluetooth proxy request: ESPHome's server ignores messages it has no handler for.
            break
        }
    }

    private func connected(_ address: UInt64, handle: UInt32) -> Connected? {
        guard case .connected(let connected)? = state.value.phases[address] else {
            publishGATTError(address, handle, ProxyErrorCode.notConnected)
            return nil
        }
        return connected
    }

    /// Without the client's cache the proxy discovered the services while connecting and streams them; a link made
    /// with the cache discovered nothing, so the list is empty (the client has its own).
    private func services(_ address: UInt64) {
        guard let connected = connected(address, handle: 0) else { return }
        if !connected.withCache {
            for response in connected.link.table.servicesResponses(address: address, efficientUUIDs: settings.efficientUUIDs) {
                publish(APIMessage(.bluetoothGATTGetServicesResponse, response))
            }
        }
        var done = BluetoothGATTGetServicesDoneResponse()
        done.address = address
        publish(APIMessage(.bluetoothGATTGetServicesDoneResponse, done))
    }

    private func read(_ address: UInt64, _ handle: UInt32) {
        guard let connected = connected(address, handle: handle) else { return }
        let link = connected.link
        link.queue.enqueue { [self] in
            let result = await link.read(handle)
            loop.execute { [self] in
                guard isCurrent(link, address) else { return }
                switch result {
                case .success(let value):
                    var response = BluetoothGATTReadResponse()
                    response.address = address
                    response.handle = handle
                    response.data = Data(value)
                    publish(APIMessage(.bluetoothGATTReadResponse, response))
                case .failure(let error):
                    publishGATTError(address, handle, Int32(error.code))
                }
            }
        }
    }

    /// A write command's failure has nothing to answer it on the air: ESP-IDF reports it written.
    private func write(_ address: UInt64, _ handle: UInt32, _ value: [UInt8], withResponse: Bool) {
        guard let connected = connected(address, handle: handle) else { return }
        let link = connected.link
        link.queue.enqueue { [self] in
            let result = await link.write(handle, value, withResponse: withResponse)
            loop.execute { [self] in
                guard isCurrent(link, address) else { return }
                if case .failure(let error) = result, withResponse {
                    publishGATTError(address, handle, Int32(error.code))
                    return
                }
                var response = BluetoothGATTWriteResponse()
                response.address = address
                response.handle = handle
                publish(APIMessage(.bluetoothGATTWriteResponse, response))
            }
        }
    }

    /// Registers (or not) the handle with the proxy's own stack, which then passes its notifications on. The CCCD is
    /// not written: on a v3 connection the client writes it itself (`BluetoothGATTWriteDescriptorRequest`).
    private func notify(_ address: UInt64, _ handle: UInt32, enable: Bool) {
        guard var connected = connected(address, handle: handle) else { return }
        if let value = UInt16(exactly: handle) {
            if enable { connected.registered.insert(value) } else { connected.registered.remove(value) }
        }
        state.value.phases[address] = .connected(connected)
        var response = BluetoothGATTNotifyResponse()
        response.address = address
        response.handle = handle
        publish(APIMessage(.bluetoothGATTNotifyResponse, response))
    }

    private func isCurrent(_ link: ProxyLink, _ address: UInt64) -> Bool {
        guard case .connected(let connected)? = state.value.phases[address] else { return false }
        return connected.link === link
    }
}
