import BlueZ
import DBus
import EventLoop
import Wearables
import SimulatedWearables

/// GattCharacteristic1 and GattDescriptor1 on a connected device, and the notifications the device pushes
/// (`src/gatt-client.c`). ATT requests take one round trip of the device's `att_round_trip`.
extension SimulatedBluetoothDaemon {
    /// The characteristic at `path` with its device.
    func characteristic(at path: ObjectPath) throws(BlueZErrorReply) -> (SimulatedDevice, GATTLayout.Characteristic) {
        let (device, relative) = try gattObject(path)
        guard device.gattExported, let characteristic = device.layout.characteristic(atRelativePath: relative) else {
            throw BlueZErrorReply(name: "org.freedesktop.DBus.Error.UnknownObject", message: "no characteristic at \(path)")
        }
        return (device, characteristic)
    }

    /// `parse_options`: `offset` must be a uint16, `type` a string; other keys are ignored.
    static func parseOptions(_ options: DBusValue) throws(BlueZErrorReply) -> (offset: Int, type: String?) {
        guard let entries = options.dictionaryEntries else { throw .invalidArguments }
        var offset = 0
        var type: String?
        for entry in entries {
            guard let key = entry.key.stringValue?.lowercased() else { continue }
            switch key {
            case "offset":
                guard case .uint16(let value) = entry.value.unwrapped else { throw .invalidArguments }
                offset = Int(value)
            case "type":
                guard case .string(let value) = entry.value.unwrapped else { throw .invalidArguments }
                type = value.lowercased()
            default:
                continue
            }
        }
        return (offset, type)
    }

    /// One ATT request to the device: waits a round trip and fails as a cancelled procedure if the link went.
    func attRoundTrip(_ device: SimulatedDevice, link: Int) async throws(BlueZErrorReply) {
        await pause(device.settings.attRoundTrip)
        guard device.link.currentLink == link else { throw .failed("Operation failed") }
    }

    /// Asks the device for a value; host-owned attributes (GAP, Service Changed) are answered by the host.
    func valueFromDevice(_ device: SimulatedDevice, _ characteristic: GATTLayout.Characteristic) async throws(BlueZErrorReply) -> [UInt8] {
        guard characteristic.flags.contains(.read) else { throw .fromATT(ATTError.readNotPermitted.code) }
        if characteristic.isHostOwned { return characteristic.initialValue }
        do {
            return try await device.peripheral.read(characteristic.uuid)
        } catch {
            throw .fromATT(error.code)
        }
    }

    func readCharacteristic(_ path: ObjectPath, options: DBusValue) async throws(BlueZErrorReply) -> [UInt8] {
        let (device, characteristic) = try characteristic(at: path)
        try await applyFaults(device, method: "ReadValue")
        guard let link = device.link.currentLink else { throw .failed("Not connected") }
        let (offset, _) = try Self.parseOptions(options)
        let relative = characteristic.relativePath
        if let inFlight = device.readsInFlight[relative] {
            // A read of the same offset already under way answers this caller too (`async_dbus_op` queue).
            guard inFlight.offset == offset else { throw .inProgress }
            let result = await withCheckedContinuation { continuation in device.readsInFlight[relative]?.waiters.append(continuation) }
            return try result.get()
        }
        device.readsInFlight[relative] = (offset, [])
        let result: Result<[UInt8], BlueZErrorReply>
        do throws(BlueZErrorReply) {
            try await attRoundTrip(device, link: link)
            let value = try await valueFromDevice(device, characteristic)
            guard device.link.currentLink == link else { throw BlueZErrorReply.failed("Operation failed") }
            guard offset <= value.count else { throw BlueZErrorReply.fromATT(ATTError.invalidOffset.code) }
            // BlueZ stores what was read at the offset into its cache and answers the whole cached value.
            var cached = offset == 0 ? [] : Array((device.valueCache[relative] ?? []).prefix(offset))
            cached += [UInt8](repeating: 0, count: max(0, offset - cached.count))
            cached += value[offset...]
            device.valueCache[relative] = cached
            if let object = objects.object(at: path) {
                object.pushProperty("Value", .bytes(cached), interface: BlueZInterfaces.gattCharacteristic)
            }
            result = .success(cached)
        } catch {
            result = .failure(error)
        }
        let waiters = device.readsInFlight.removeValue(forKey: relative)?.waiters ?? []
        for waiter in waiters { waiter.resume(returning: result) }
        return try result.get()
    }

    func writeCharacteristic(_ path: ObjectPath, value: [UInt8], options: DBusValue) async throws(BlueZErrorReply) {
        let (device, characteristic) = try characteristic(at: path)
        try await applyFaults(device, method: "WriteValue")
        guard let link = device.link.currentLink else { throw .failed("Not connected") }
        let relative = characteristic.relativePath
        if device.writeSockets[relative] != nil { throw .notPermitted("Write acquired") }
        if device.writesInFlight.contains(relative) { throw .inProgress }
        let (offset, type) = try Self.parseOptions(options)
        let flags = characteristic.flags
        // The procedure BlueZ picks (`characteristic_write_value`): reliable, then request, then command.
        let reliable = type == "reliable" || (type == nil && flags.contains(.reliableWrite))
        let request = type == "request" || (type == nil && flags.contains(.write))
        if reliable || request {
            device.writesInFlight.insert(relative)
            defer { device.writesInFlight.remove(relative) }
            let commandsBefore = device.commands.written
            try await attRoundTrip(device, link: link)
            await waitForCommands(device, upTo: commandsBefore)
            guard device.link.currentLink == link else { throw .failed("Operation failed") }
            guard flags.contains(.write) || (reliable && flags.contains(.reliableWrite)) else {
                throw .fromATT(ATTError.writeNotPermitted.code)
            }
            guard offset + value.count <= 512 else { throw .fromATT(ATTError.invalidAttributeValueLength.code) }
            try await deliverWrite(device, characteristic, value, kind: .request)
            return
        }
        guard (type == "command" || (type == nil && flags.contains(.writeWithoutResponse))), offset == 0 else {
            throw .notSupported
        }
        // A write command is answered as soon as it is queued; the device gets it a moment later.
        let command = CommandQueue.Command(link: link, characteristic: characteristic, value: value,
                                           due: .now + device.settings.attRoundTrip / 2)
        guard device.commands.append(command) else { return }
        let address = device.address
        track { daemon in await daemon.deliverCommands(address) }
    }

    /// Hands the queued write commands to the device in order, each at its due time; those of a link that ended
    /// are dropped, as the air drops them.
    func deliverCommands(_ address: BluetoothAddress) async {
        while let device = devices[address], let next = device.commands.peek() {
            do {
                try await Task.sleep(until: next.due, clock: .continuous)
            } catch {
                device.commands.abandon()
                return
            }
            _ = device.commands.removeFirst()
            if device.link.currentLink == next.link {
                try? await deliverWrite(device, next.characteristic, next.value, kind: .command)
            }
            device.commands.markTaken()
        }
    }

    /// Returns once the first `count` write commands ever queued for `device` were handed over.
    func waitForCommands(_ device: SimulatedDevice, upTo count: Int) async {
        guard !device.commands.hasTaken(count) else { return }
        await withCheckedContinuation { continuation in device.commands.wait(for: count, continuation) }
    }

    /// Hands a write to the device; writes to attributes the device does not allow are refused as its ATT
    /// server would (a command silently).
    func deliverWrite(_ device: SimulatedDevice, _ characteristic: GATTLayout.Characteristic, _ value: [UInt8],
                      kind: WriteKind) async throws(BlueZErrorReply) {
        let allowed = kind == .command ? characteristic.flags.contains(.writeWithoutResponse)
            : characteristic.flags.contains(.write) || characteristic.flags.contains(.reliableWrite)
        guard allowed, !characteristic.isHostOwned else {
            if kind == .request { throw .fromATT(ATTError.writeNotPermitted.code) }
            return
        }
        device.received[characteristic.uuid, default: []].append(value)
        do {
            try await device.peripheral.write(characteristic.uuid, value: value, kind: kind)
        } catch {
            if kind == .request { throw .fromATT(error.code) }
        }
    }

    // MARK: Notifications

    func startNotify(_ path: ObjectPath, client: String) async throws(BlueZErrorReply) {
        let (device, characteristic) = try characteristic(at: path)
        try await applyFaults(device, method: "StartNotify")
        let relative = characteristic.relativePath
        guard var sessions = device.notify[relative] else { throw .notSupported }
        let outcome: NotifySessions.StartOutcome
        do {
            outcome = try sessions.startNotify(client: client, connected: device.link.isConnected,
                                               disconnecting: device.link.isDisconnecting)
        } catch {
            throw Self.reply(for: error)
        }
        device.notify[relative] = sessions
        guard outcome == .register, let link = device.link.currentLink else { return }
        // The CCC write.
        do {
            try await attRoundTrip(device, link: link)
        } catch {
            device.notify[relative]?.registrationFailed(client: client)
            throw error
        }
        guard var current = device.notify[relative] else { throw .failed("Operation failed") }
        let turnedOn = current.registrationSucceeded(client: client)
        device.notify[relative] = current
        if turnedOn { setCharacteristicProperty(device, relative, "Notifying", true) }
        await syncPeripheralSubscription(device, characteristic)
    }

    func stopNotify(_ path: ObjectPath, client: String) async throws(BlueZErrorReply) {
        let (device, characteristic) = try characteristic(at: path)
        try await applyFaults(device, method: "StopNotify")
        let relative = characteristic.relativePath
        if let socket = device.notifySockets.removeValue(forKey: relative) {
            // BlueZ releases an acquired notify on StopNotify from anyone.
            sockets.close(socket)
            _ = device.notify[relative]?.releaseAcquired()
            setCharacteristicProperty(device, relative, "NotifyAcquired", false)
            await syncPeripheralSubscription(device, characteristic)
            return
        }
        guard var sessions = device.notify[relative] else { throw .failed("No notify session started") }
        let turnedOff: Bool
        do {
            turnedOff = try sessions.stopNotify(client: client)
        } catch {
            throw .failed("No notify session started")
        }
        device.notify[relative] = sessions
        if turnedOff { setCharacteristicProperty(device, relative, "Notifying", false) }
        await syncPeripheralSubscription(device, characteristic)
    }

    func acquireNotify(_ path: ObjectPath, client: String) async throws(BlueZErrorReply) -> [DBusValue] {
        let (device, characteristic) = try characteristic(at: path)
        try await applyFaults(device, method: "AcquireNotify")
        let relative = characteristic.relativePath
        guard var sessions = device.notify[relative] else { throw .notSupported }
        guard let link = device.link.currentLink else { throw .failed("Not connected") }
        do {
            try sessions.acquireNotify(client: client, connected: true)
        } catch {
            throw Self.reply(for: error)
        }
        device.notify[relative] = sessions
        // The CCC write, then the socket.
        do {
            try await attRoundTrip(device, link: link)
        } catch {
            _ = device.notify[relative]?.releaseAcquired()
            throw .failed("Not connected")
        }
        guard sockets.canWatch, let (ours, theirs) = AcquiredSocket.makePair() else {
            _ = device.notify[relative]?.releaseAcquired()
            throw .failed("Too many open files")
        }
        device.notifySockets[relative] = ours
        let address = device.address
        sockets.watch(ours, handlers: .init(datagram: { _ in }, closed: { [weak self] in
            Task { await self?.acquiredNotifyClosed(address, relative: relative, socket: ours.id) }
        }))
        setCharacteristicProperty(device, relative, "NotifyAcquired", true)
        await syncPeripheralSubscription(device, characteristic)
        return [.unixFD(theirs), .uint16(UInt16(device.mtu))]
    }

    /// The client closed its end of an acquired notify socket: the acquisition ends.
    func acquiredNotifyClosed(_ address: BluetoothAddress, relative: String, socket: Int) async {
        guard let device = devices[address], device.notifySockets[relative]?.id == socket else { return }
        device.notifySockets[relative] = nil
        _ = device.notify[relative]?.releaseAcquired()
        setCharacteristicProperty(device, relative, "NotifyAcquired", false)
        if let characteristic = device.layout.characteristic(atRelativePath: relative) {
            await syncPeripheralSubscription(device, characteristic)
        }
    }

    func acquireWrite(_ path: ObjectPath, client: String) async throws(BlueZErrorReply) -> [DBusValue] {
        let (device, characteristic) = try characteristic(at: path)
        try await applyFaults(device, method: "AcquireWrite")
        guard let link = device.link.currentLink else { throw .failed("Not connected") }
        let relative = characteristic.relativePath
        if device.writeSockets[relative] != nil { throw .notPermitted("Write acquired") }
        guard characteristic.flags.contains(.writeWithoutResponse) else { throw .notSupported }
        guard sockets.canWatch, let (ours, theirs) = AcquiredSocket.makePair() else { throw .failed("Too many open files") }
        device.writeSockets[relative] = ours
        let address = device.address
        // One line for the socket: its writes reach the device in the order the client sent them, and its hang-up
        // comes after them (a task each would start in no particular order).
        let inOrder = OrderedWorkQueue()
        sockets.watch(ours, handlers: .init(datagram: { [weak self] datagram in
            inOrder.enqueue { [weak self] in await self?.acquiredWriteReceived(address, link: link, relative: relative, value: datagram) }
        }, closed: { [weak self] in
            inOrder.enqueue { [weak self] in await self?.acquiredWriteClosed(address, relative: relative, socket: ours.id) }
        }))
        setCharacteristicProperty(device, relative, "WriteAcquired", true)
        return [.unixFD(theirs), .uint16(UInt16(device.mtu))]
    }

    /// A datagram on an acquired write socket is a write command (`sock_read`).
    func acquiredWriteReceived(_ address: BluetoothAddress, link: Int, relative: String, value: [UInt8]) async {
        guard let device = devices[address], device.link.currentLink == link,
              let characteristic = device.layout.characteristic(atRelativePath: relative) else { return }
        try? await deliverWrite(device, characteristic, value, kind: .command)
    }

    func acquiredWriteClosed(_ address: BluetoothAddress, relative: String, socket: Int) {
        guard let device = devices[address], device.writeSockets[relative]?.id == socket else { return }
        device.writeSockets[relative] = nil
        setCharacteristicProperty(device, relative, "WriteAcquired", false)
    }

    static func reply(for refusal: NotifySessions.Refusal) -> BlueZErrorReply {
        switch refusal {
        case .notifyAcquired: .notPermitted("Notify acquired")
        case .notSupported: .notSupported
        case .inProgress: .inProgress
        case .notConnected: .notConnected
        case .noSession: .failed("No notify session started")
        }
    }

    // MARK: From the device

    func isSubscribed(_ address: BluetoothAddress, link: Int, characteristic uuid: BluetoothUUID) -> Bool {
        guard let device = devices[address], device.link.currentLink == link,
              let characteristic = device.layout.characteristic(uuid) else { return false }
        return device.isSubscribed(characteristic)
    }

    /// A notification or indication from the device: to the acquired socket, or as a `Value` change for the
    /// StartNotify sessions (every notification signals, equal values included), and to bluetoothd's own battery
    /// plugin.
    func deliver(_ address: BluetoothAddress, link: Int, characteristic uuid: BluetoothUUID, value: [UInt8],
                 indication: Bool) async -> Bool {
        guard let (device, characteristic) = deliveryTarget(address, link: link, uuid, indication: indication) else {
            return false
        }
        let delivered = deliverOne(device, characteristic, value)
        if indication && delivered {
            // The central's confirmation takes a round trip; the next indication waits for it.
            await pause(device.settings.attRoundTrip)
        }
        return delivered
    }

    /// A burst of notifications (the bench's load generator): each as `deliver` would send it, stopping at the
    /// first that goes nowhere; returns how many went out.
    func deliver(_ address: BluetoothAddress, link: Int, characteristic uuid: BluetoothUUID,
                 notifications values: [[UInt8]]) -> Int {
        guard let (device, characteristic) = deliveryTarget(address, link: link, uuid, indication: false) else { return 0 }
        var sent = 0
        for value in values {
            guard deliverOne(device, characteristic, value) else { break }
            sent += 1
        }
        return sent
    }

    private func deliveryTarget(_ address: BluetoothAddress, link: Int, _ uuid: BluetoothUUID,
                                indication: Bool) -> (SimulatedDevice, GATTLayout.Characteristic)? {
        guard let device = devices[address], device.link.currentLink == link,
              let characteristic = device.layout.characteristic(uuid),
              characteristic.flags.contains(indication ? .indicate : .notify) else { return nil }
        return (device, characteristic)
    }

    private func deliverOne(_ device: SimulatedDevice, _ characteristic: GATTLayout.Characteristic, _ value: [UInt8]) -> Bool {
        let payload = Array(value.prefix(device.mtu - 3))
        let relative = characteristic.relativePath
        var delivered = false
        if device.internalSubscriptions.contains(characteristic.uuid), characteristic.uuid == BluetoothUUID(0x2A19),
           let percentage = payload.first {
            delivered = true
            if device.batteryExported, device.batteryPercentage != percentage, percentage <= 100 {
                device.batteryPercentage = percentage
                objects.object(at: device.path)?.setProperty("Percentage", .byte(percentage), interface: BlueZInterfaces.battery)
            }
        }
        if let socket = device.notifySockets[relative] {
            let sent = socket.send(payload)
            if !sent { SimulatorCounters.notificationsDroppedOnFullSockets.add(1, ordering: .relaxed) }
            delivered = sent || delivered
        } else if device.notify[relative]?.sessions.values.contains(.active) ?? false {
            device.valueCache[relative] = payload
            objects.object(at: device.objectPath(relative))?.pushProperty("Value", .bytes(payload),
                                                                          interface: BlueZInterfaces.gattCharacteristic)
            delivered = true
        }
        return delivered
    }

    // MARK: Descriptors

    func descriptor(at path: ObjectPath) throws(BlueZErrorReply) -> (SimulatedDevice, GATTLayout.Characteristic, GATTLayout.Descriptor) {
        let (device, relative) = try gattObject(path)
        guard device.gattExported, let (characteristic, descriptor) = device.layout.descriptor(atRelativePath: relative) else {
            throw BlueZErrorReply(name: "org.freedesktop.DBus.Error.UnknownObject", message: "no descriptor at \(path)")
        }
        return (device, characteristic, descriptor)
    }

    func readDescriptor(_ path: ObjectPath, options: DBusValue) async throws(BlueZErrorReply) -> [UInt8] {
        let (device, characteristic, descriptor) = try descriptor(at: path)
        try await applyFaults(device, method: "ReadValue")
        guard let link = device.link.currentLink else { throw .failed("Not connected") }
        let (offset, _) = try Self.parseOptions(options)
        try await attRoundTrip(device, link: link)
        let value: [UInt8]
        if descriptor.isClientConfiguration {
            // What the device's CCC holds for this connection: notifications (0x0001) or indications (0x0002).
            let subscribed = device.isSubscribed(characteristic)
            value = !subscribed ? [0, 0] : characteristic.flags.contains(.notify) ? [1, 0] : [2, 0]
        } else {
            guard descriptor.flags.contains(.read) else { throw .fromATT(ATTError.readNotPermitted.code) }
            value = device.descriptorValues[descriptor.relativePath] ?? descriptor.initialValue
        }
        guard offset <= value.count else { throw .fromATT(ATTError.invalidOffset.code) }
        let result = Array(value[offset...])
        device.valueCache[descriptor.relativePath] = result
        objects.object(at: path)?.pushProperty("Value", .bytes(result), interface: BlueZInterfaces.gattDescriptor)
        return result
    }

    func writeDescriptor(_ path: ObjectPath, value: [UInt8], options: DBusValue) async throws(BlueZErrorReply) {
        let (device, _, descriptor) = try descriptor(at: path)
        try await applyFaults(device, method: "WriteValue")
        guard let link = device.link.currentLink else { throw .failed("Not connected") }
        _ = try Self.parseOptions(options)
        // StartNotify and StopNotify own the CCC descriptor (`descriptor_write_value`).
        if descriptor.isClientConfiguration { throw .notPermitted("Write not permitted") }
        try await attRoundTrip(device, link: link)
        guard descriptor.flags.contains(.write) else { throw .fromATT(ATTError.writeNotPermitted.code) }
        device.descriptorValues[descriptor.relativePath] = value
    }
}
