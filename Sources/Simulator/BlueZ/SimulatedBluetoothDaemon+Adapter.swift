import DBus
import Wearables

/// Adapter1: power, discovery sessions and filters, what the scan reports, RemoveDevice, and the expiry of
/// devices BlueZ only saw advertising (`src/adapter.c`).
extension SimulatedBluetoothDaemon {
    func startDiscovery(client: String) async throws(BlueZErrorReply) {
        try await applyFaults(nil, method: "StartDiscovery")
        guard powered else { throw .notReady }
        // A controller that will not scan: bluetoothd answers the refused MGMT Start Discovery with busy and drops
        // the session (`start_discovery_complete`).
        guard !radioFaults.discoveryStuck else { throw .busy }
        do {
            if try discovery.start(client) { startScanning() }
        } catch {
            throw .busy
        }
        adapterCounts.discoveryStarts += 1
    }

    func stopDiscovery(client: String) async throws(BlueZErrorReply) {
        try await applyFaults(nil, method: "StopDiscovery")
        guard powered else { throw .notReady }
        do {
            if try discovery.stop(client) { stopScanning() }
        } catch {
            throw .failed("No discovery started")
        }
    }

    func setDiscoveryFilter(_ entries: [String: DBusValue], client: String) async throws(BlueZErrorReply) {
        try await applyFaults(nil, method: "SetDiscoveryFilter")
        guard powered else { throw .notReady }
        let filter: DiscoveryFilter?
        do {
            filter = try DiscoveryFilter.parse(entries)
        } catch {
            logger.debug("SetDiscoveryFilter refused: \(error.key): \(error.reason)")
            throw .invalidArguments
        }
        discovery.setFilter(filter, for: client)
        updateDiscoverableForDiscovery()
    }

    func removeDevice(_ path: ObjectPath) async throws(BlueZErrorReply) {
        try await applyFaults(nil, method: "RemoveDevice")
        guard let address = pathToAddress[path], let device = devices[address], device.isExported else { throw .doesNotExist }
        guard powered else { throw .notReady }
        device.temporary = true
        if device.link.isConnected || device.link.state != .disconnected {
            try await disconnectLink(device)
        }
        forgetDevice(device)
    }

    func setAdapterAlias(_ alias: String) {
        adapterAlias = alias.isEmpty ? settings.name : alias
        // The registry stores what the client set; an empty alias means the system name, as in BlueZ.
        if alias.isEmpty { schedule(after: .zero) { daemon in daemon.setAdapterProperty("Alias", .string(daemon.adapterAlias)) } }
    }

    func setDiscoverable(_ on: Bool) async throws(BlueZErrorReply) {
        guard powered else { throw .notReady }
        discoverable = on
    }

    /// Switches the adapter on or off. Off drops every link and ends every discovery session, as a controller
    /// power-down does; the sessions do not come back when power returns.
    func setPowered(_ on: Bool) async {
        // A Set that was on its way when the adapter was removed finds no controller.
        guard on != powered, !radioFaults.adapterRemoved else { return }
        if !on {
            for device in devices.values.sorted(by: { $0.address < $1.address }) {
                await linkDown(device, cause: .powerOff)
            }
            if discovery.isDiscovering {
                discovery.removeAllSessions()
                stopScanning()
            }
            if discoverable {
                discoverable = false
                setAdapterProperty("Discoverable", false)
            }
            radioFaults.poweredOff()
            adapterCounts.powerOffs += 1
        } else {
            adapterCounts.powerOns += 1
        }
        powered = on
        setAdapterProperty("Powered", .boolean(on))
    }

    private func updateDiscoverableForDiscovery() {
        let wanted = discovery.isDiscovering && discovery.wantsDiscoverable
        if wanted && !discoverable {
            discoverable = true
            setAdapterProperty("Discoverable", true)
        }
    }

    // MARK: Scanning

    func startScanning() {
        setAdapterProperty("Discovering", true)
        updateDiscoverableForDiscovery()
        let now = ContinuousClock.now
        for device in devices.values {
            // The first advertisement arrives within an interval (at most 100 ms, so tests need not wait).
            let window = min(device.settings.advertisingInterval, .milliseconds(100))
            device.nextSighting = now + window * Double.random(in: 0.1...1, using: &device.random)
        }
        scanTask?.cancel()
        scanTask = Task { [weak self] in
            while !Task.isCancelled {
                guard let self, await self.scanOnce() else { return }
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    /// Ends scanning: RSSI and TxPower are invalidated on every device seen (`invalidate_rssi_and_tx_power`).
    func stopScanning() {
        scanTask?.cancel()
        scanTask = nil
        radioFaults.scannerStopped()
        for device in devices.values.sorted(by: { $0.address < $1.address }) where device.isExported && device.reportedRSSI != nil {
            device.reportedRSSI = nil
            invalidate(["RSSI", "TxPower"], on: device)
        }
        setAdapterProperty("Discovering", false)
    }

    /// PropertiesChanged with the names in the invalidated list, as gdbus sends for a property that stopped
    /// existing. (`ObjectRegistry` cannot drop a stored value, so Get keeps answering the last one; see
    /// docs/simulator.md.)
    func invalidate(_ names: [String], on device: SimulatedDevice) {
        objects.object(at: device.path)?.emit(signal: "PropertiesChanged", interface: "org.freedesktop.DBus.Properties",
                                              arguments: [.string(BlueZInterfaces.device), .stringVariantDictionary([:]), .strings(names)])
    }

    /// One pass of the scanner; false once discovery has stopped.
    func scanOnce() -> Bool {
        guard discovery.isDiscovering, powered else { return false }
        let now = ContinuousClock.now
        for device in devices.values.sorted(by: { $0.address < $1.address }) {
            guard device.advertising, let due = device.nextSighting, due <= now else { continue }
            let interval = device.settings.advertisingInterval
            device.nextSighting = now + interval * Double.random(in: 0.9...1.1, using: &device.random)
            // A deaf scanner: the controller says it scans, but no advertising report reaches bluetoothd.
            if radioFaults.hearsAdvertisements { sighted(device, at: now) } else { adapterCounts.unheardAdvertisements += 1 }
        }
        return true
    }

    /// One advertisement reached the adapter: BlueZ creates the device object or updates its properties
    /// (`btd_adapter_device_found`).
    func sighted(_ device: SimulatedDevice, at now: ContinuousClock.Instant) {
        let advertisement = device.advertisement
        // Two or three dB of fading on every packet around the device's level, or the noise a test set.
        var level = advertisement.rssi
        if var noise = device.rssiNoise {
            level = noise.level(around: level)
            device.rssiNoise = noise
        } else {
            level += Int.random(in: -2...2, using: &device.random)
        }
        let rssi = max(-127, min(20, level))
        let sighting = DiscoveryFilter.Sighting(address: device.address.description, name: advertisement.localName,
                                                serviceUUIDs: advertisement.serviceUUIDs, rssi: rssi,
                                                txPower: advertisement.txPower)
        guard discovery.reports(sighting) else { return }
        device.lastSeen = now
        guard device.isExported else {
            device.reportedRSSI = rssi
            if let name = advertisement.localName { device.knownName = name }
            if let appearance = advertisement.appearance { device.knownAppearance = appearance }
            device.advertisedUUIDs = advertisement.serviceUUIDs
            exportDevice(device)
            return
        }
        guard let object = objects.object(at: device.path) else { return }
        var changes: [String: DBusValue] = [:]
        if let name = advertisement.localName, name != device.knownName {
            device.knownName = name
            changes["Name"] = .string(name)
            if device.alias == nil { changes["Alias"] = .string(name) }
        }
        if !device.servicesResolved && !device.paired {
            let merged = device.advertisedUUIDs + advertisement.serviceUUIDs.filter { !device.advertisedUUIDs.contains($0) }
            if merged != device.advertisedUUIDs {
                device.advertisedUUIDs = merged
                changes["UUIDs"] = .strings(merged.map(\.string))
            }
        }
        if object.property("AdvertisingFlags", interface: BlueZInterfaces.device) == nil {
            changes["AdvertisingFlags"] = .bytes([advertisement.flags])
        }
        if let power = advertisement.txPower { changes["TxPower"] = .int16(Int16(power)) }
        if !changes.isEmpty { object.setProperties(changes, interface: BlueZInterfaces.device) }
        // RSSI: every advertisement under a filtered discovery (BlueZ's threshold is then 0 and it signals even
        // an equal value), else only moves of 8 dBm or more (`device_set_rssi_with_delta`).
        if discovery.isFiltered {
            device.reportedRSSI = rssi
            object.pushProperty("RSSI", .int16(Int16(rssi)), interface: BlueZInterfaces.device)
        } else if device.reportedRSSI.map({ abs($0 - rssi) >= 8 }) ?? true {
            device.reportedRSSI = rssi
            object.setProperty("RSSI", .int16(Int16(rssi)), interface: BlueZInterfaces.device)
        }
        // Advertising data: re-sent on every advertisement when some session wants duplicates.
        if !advertisement.manufacturerData.isEmpty {
            let value = advertisement.bluezManufacturerData
            if discovery.wantsDuplicateData { object.pushProperty("ManufacturerData", value, interface: BlueZInterfaces.device) }
            else { object.setProperty("ManufacturerData", value, interface: BlueZInterfaces.device) }
        }
        if !advertisement.serviceData.isEmpty {
            let value = advertisement.bluezServiceData
            if discovery.wantsDuplicateData { object.pushProperty("ServiceData", value, interface: BlueZInterfaces.device) }
            else { object.setProperty("ServiceData", value, interface: BlueZInterfaces.device) }
        }
    }

    /// Removes devices BlueZ only knows from advertisements once they have not been seen for the temporary
    /// timeout (main.conf `TemporaryTimeout`); connected, paired and trusted ones stay.
    func expireTemporaryDevices() {
        let now = ContinuousClock.now
        for device in devices.values.sorted(by: { $0.address < $1.address }) {
            guard device.isExported, device.temporary, device.link.state == .disconnected,
                  let seen = device.lastSeen, now - seen >= settings.temporaryTimeout else { continue }
            logger.debug("\(device.address) not seen for \(settings.temporaryTimeout), removing it")
            forgetDevice(device)
        }
    }
}
