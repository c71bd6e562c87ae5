import BlueZ
import DBus
import Wearables
import SimulatedWearables

/// Device1 Connect and Disconnect, the link going up (Connected, GATT objects, ServicesResolved, Battery1) and
/// down (the reverse), and the writable Device1 properties (`src/device.c`).
extension SimulatedBluetoothDaemon {
    enum LinkDownCause: Equatable {
        /// Disconnect (or RemoveDevice) after BlueZ's disconnect timer.
        case localRequest
        /// The device went away: supervision timeout, peripheral-initiated disconnection.
        case remote
        case powerOff
    }

    func connect(_ address: BluetoothAddress) async throws(BlueZErrorReply) {
        let device = try device(address)
        try await applyFaults(device, method: "Connect")
        guard powered else { throw .notReady }
        if device.blocked { throw .failed("Operation not permitted") }
        switch device.link.connect() {
        case .alreadyConnected: return
        case .alreadyConnecting: throw .failed("Operation already in progress")
        case .start(let attempt):
            device.temporary = false
            beginAttempt(device, attempt)
        }
        try await waitForConnection(device)
    }

    /// Waits for the current attempt on `device` to succeed or fail.
    func waitForConnection(_ device: SimulatedDevice) async throws(BlueZErrorReply) {
        let result = await withCheckedContinuation { continuation in device.connectWaiters.append(continuation) }
        try result.get()
    }

    func beginAttempt(_ device: SimulatedDevice, _ attempt: Int) {
        let address = device.address
        schedule(after: device.settings.connectDelay) { daemon in daemon.attemptTimerFired(address, attempt: attempt) }
        schedule(after: settings.connectTimeout) { daemon in
            guard let device = daemon.devices[address], device.link.state == .connecting(attempt: attempt) else { return }
            daemon.failAttempt(device, attempt, with: .leConnectionAbortByLocal)
        }
    }

    /// The connection delay is over: the attempt fails by an injected refusal or the connection limit, waits for
    /// the device to advertise, or succeeds.
    func attemptTimerFired(_ address: BluetoothAddress, attempt: Int) {
        guard let device = devices[address], device.link.state == .connecting(attempt: attempt) else { return }
        if let refusal = device.faults.takeConnectRefusal() {
            failAttempt(device, attempt, with: refusal)
            return
        }
        let linksInUse = devices.values.filter { $0.link.isConnected }.count
        if linksInUse >= settings.maxConnections {
            failAttempt(device, attempt, with: .failed("le-connection-concurrent-connection-limit"))
            return
        }
        guard device.advertising && device.peripheral.advertisement.isConnectable else {
            // An LE connection completes when the device next advertises, or times out.
            device.attemptAwaitingAdvertising = attempt
            return
        }
        establishLink(device, attempt)
    }

    func failAttempt(_ device: SimulatedDevice, _ attempt: Int, with error: BlueZErrorReply) {
        guard device.link.attemptFailed(attempt) else { return }
        device.attemptAwaitingAdvertising = nil
        logger.debug("connection to \(device.address) failed: \(error)")
        resumeConnectWaiters(device, .failure(error))
    }

    func resumeConnectWaiters(_ device: SimulatedDevice, _ result: Result<Void, BlueZErrorReply>) {
        let waiters = device.connectWaiters
        device.connectWaiters = []
        for waiter in waiters { waiter.resume(returning: result) }
    }

    /// The link is up: Connected, then the Connect reply; services are resolved after the discovery time.
    func establishLink(_ device: SimulatedDevice, _ attempt: Int) {
        guard let link = device.link.attemptSucceeded(attempt) else { return }
        device.attemptAwaitingAdvertising = nil
        device.mtu = min(517, device.settings.mtu)
        device.temporary = false
        setDeviceProperties(device, ["Connected": true])
        logger.info("\(device.address) connected (link \(link), MTU \(device.mtu))")
        resumeConnectWaiters(device, .success(()))
        let linkObject = SimulatedLink(daemon: self, address: device.address, link: link, mtu: device.mtu)
        device.linkObject = linkObject
        let peripheral = device.peripheral
        device.behaviour = Task { await peripheral.run(on: linkObject) }
        let address = device.address
        schedule(after: device.settings.serviceDiscoveryTime) { daemon in await daemon.servicesDiscovered(address, link: link) }
    }

    /// GATT discovery finished: the GAP name and appearance are read, GATT objects exported (or, when cached,
    /// their MTU updated), sessions kept over the disconnection re-enabled, ServicesResolved set; the battery
    /// plugin attaches two ATT round trips later.
    func servicesDiscovered(_ address: BluetoothAddress, link: Int) async {
        guard let device = devices[address], device.link.currentLink == link else { return }
        var changes: [String: DBusValue] = [:]
        if device.knownName != device.peripheral.deviceName {
            device.knownName = device.peripheral.deviceName
            changes["Name"] = .string(device.peripheral.deviceName)
            if device.alias == nil { changes["Alias"] = .string(device.peripheral.deviceName) }
        }
        if let appearance = device.peripheral.advertisement.appearance, device.knownAppearance != appearance {
            device.knownAppearance = appearance
            changes["Appearance"] = .uint16(appearance)
        }
        if !changes.isEmpty { setDeviceProperties(device, changes) }
        if device.gattExported {
            for characteristic in device.layout.exportedServices.flatMap(\.characteristics) {
                setCharacteristicProperty(device, characteristic.relativePath, "MTU", .uint16(UInt16(device.mtu)))
            }
        } else {
            exportGATTObjects(device)
        }
        for characteristic in device.layout.exportedServices.flatMap(\.characteristics) {
            guard var sessions = device.notify[characteristic.relativePath] else { continue }
            let turnedOn = sessions.linkRestored()
            device.notify[characteristic.relativePath] = sessions
            if turnedOn { setCharacteristicProperty(device, characteristic.relativePath, "Notifying", true) }
            await syncPeripheralSubscription(device, characteristic)
        }
        guard device.link.currentLink == link else { return }
        let uuids = device.layout.resolvedUUIDs
        device.servicesResolved = true
        setDeviceProperties(device, ["UUIDs": .strings(uuids.map(\.string)), "ServicesResolved": true])
        let waiters = device.resolutionWaiters
        device.resolutionWaiters = []
        for waiter in waiters { waiter.resume(returning: true) }
        if device.layout.characteristic(BluetoothUUID(0x2A19))?.flags.contains(.notify) ?? false {
            schedule(after: device.settings.attRoundTrip * 2) { daemon in await daemon.attachBatteryPlugin(address, link: link) }
        }
    }

    /// bluetoothd's battery plugin reads Battery Level, enables its notifications for itself, and exports
    /// org.bluez.Battery1 with the percentage (`profiles/battery/battery.c`).
    func attachBatteryPlugin(_ address: BluetoothAddress, link: Int) async {
        guard let device = devices[address], device.link.currentLink == link, !device.link.isDisconnecting,
              let characteristic = device.layout.characteristic(BluetoothUUID(0x2A19)) else { return }
        guard let level = try? await device.peripheral.read(characteristic.uuid), let percentage = level.first,
              device.link.currentLink == link else { return }
        device.internalSubscriptions.insert(characteristic.uuid)
        await syncPeripheralSubscription(device, characteristic)
        guard device.link.currentLink == link, !device.batteryExported else { return }
        device.batteryExported = true
        device.batteryPercentage = percentage
        objects.export(device.path, interfaces: [(BlueZInterfaces.batteryDefinition, ["Percentage": .byte(percentage)])])
    }

    func detachBatteryPlugin(_ device: SimulatedDevice) {
        device.internalSubscriptions.removeAll()
        guard device.batteryExported else { return }
        device.batteryExported = false
        device.batteryPercentage = nil
        objects.remove(interfaces: [BlueZInterfaces.battery], from: device.path)
    }

    func disconnect(_ address: BluetoothAddress) async throws(BlueZErrorReply) {
        let device = try device(address)
        try await applyFaults(device, method: "Disconnect")
        try await disconnectLink(device)
    }

    /// `device_request_disconnect`: cancels a pending Connect, or disconnects the profiles now and drops the link
    /// when the disconnect timer fires; returns once the link is down.
    func disconnectLink(_ device: SimulatedDevice) async throws(BlueZErrorReply) {
        switch device.link.disconnect() {
        case .notConnected:
            return
        case .cancelAttempt:
            device.attemptAwaitingAdvertising = nil
            resumeConnectWaiters(device, .failure(.failed("Cancelled")))
            return
        case .startDisconnect(let link):
            detachBatteryPlugin(device)
            let address = device.address
            schedule(after: settings.disconnectTimer) { daemon in
                guard let device = daemon.devices[address] else { return }
                await daemon.linkDown(device, cause: .localRequest, link: link)
            }
        case .joinDisconnect:
            break
        }
        await withCheckedContinuation { continuation in device.disconnectWaiters.append(continuation) }
    }

    /// The link is gone: acquired sockets hang up, the behaviour stops, GATT objects go (unless cached),
    /// ServicesResolved false, pending Disconnects are answered, Connected false.
    func linkDown(_ device: SimulatedDevice, cause: LinkDownCause, link: Int? = nil) async {
        let ended = device.link.linkLost(link)
        if ended.attempt != nil {
            device.attemptAwaitingAdvertising = nil
            resumeConnectWaiters(device, .failure(cause == .powerOff ? .leConnectionAbortByLocal : .failed("Cancelled")))
            return
        }
        guard let endedLink = ended.link else { return }
        logger.info("\(device.address) disconnected (link \(endedLink), \(cause))")
        device.behaviour?.cancel()
        device.behaviour = nil
        device.linkObject = nil
        for (relative, socket) in device.notifySockets.sorted(by: { $0.key < $1.key }) {
            sockets.close(socket)
            if var sessions = device.notify[relative] {
                _ = sessions.releaseAcquired()
                device.notify[relative] = sessions
            }
            setCharacteristicProperty(device, relative, "NotifyAcquired", false)
        }
        device.notifySockets = [:]
        for (relative, socket) in device.writeSockets.sorted(by: { $0.key < $1.key }) {
            sockets.close(socket)
            setCharacteristicProperty(device, relative, "WriteAcquired", false)
        }
        device.writeSockets = [:]
        detachBatteryPlugin(device)
        let subscribed = device.peripheralSubscriptions
        device.peripheralSubscriptions = []
        for uuid in subscribed.sorted() { await device.peripheral.subscriptionChanged(uuid, isSubscribed: false) }
        if device.keepsGATT(under: settings.gattCache) {
            for relative in device.notify.keys.sorted() {
                device.notify[relative]?.linkLost()
            }
        } else {
            removeGATTObjects(device)
        }
        if device.servicesResolved {
            device.servicesResolved = false
            setDeviceProperties(device, ["ServicesResolved": false])
        }
        let disconnectWaiters = device.disconnectWaiters
        device.disconnectWaiters = []
        for waiter in disconnectWaiters { waiter.resume() }
        let resolutionWaiters = device.resolutionWaiters
        device.resolutionWaiters = []
        for waiter in resolutionWaiters { waiter.resume(returning: false) }
        if let waiter = device.pairing?.waiter {
            device.pairing?.waiter = nil
            waiter.resume(returning: .failure(.authenticationCanceled))
        }
        setDeviceProperties(device, ["Connected": false])
    }

    /// The peripheral's behaviour hung up (`PeripheralLink.disconnect`).
    func peripheralDisconnected(_ address: BluetoothAddress, link: Int) async {
        guard let device = devices[address], device.link.currentLink == link else { return }
        await linkDown(device, cause: .remote, link: link)
    }

    // MARK: Writable properties

    func setDeviceAlias(_ address: BluetoothAddress, _ alias: String) {
        guard let device = devices[address] else { return }
        device.alias = alias.isEmpty ? nil : alias
        // An empty alias means "the name again"; the registry stored the empty string, so correct it after.
        if alias.isEmpty {
            schedule(after: .zero) { daemon in
                guard let device = daemon.devices[address] else { return }
                daemon.setDeviceProperties(device, ["Alias": .string(device.effectiveAlias)])
            }
        }
    }

    func setTrusted(_ address: BluetoothAddress, _ trusted: Bool) {
        guard let device = devices[address] else { return }
        device.trusted = trusted
        if trusted { device.temporary = false }
    }

    /// Blocking drops the link and refuses connections until unblocked.
    func setBlocked(_ address: BluetoothAddress, _ blocked: Bool) async {
        guard let device = devices[address] else { return }
        device.blocked = blocked
        if blocked {
            device.temporary = false
            await linkDown(device, cause: .localRequest)
        }
    }
}
