import DBus

extension BlueZClient {
    /// Connects and waits for ServicesResolved: GATT is usable only then. On timeout the attempt is
    /// cancelled with Disconnect so BlueZ does not keep trying in the background.
    public func connect(_ device: ObjectPath, timeout: Duration) async throws(BlueZError) {
        let resolved: @Sendable (BlueZModel) -> Bool = { $0.devices[device].map { $0.connected && $0.servicesResolved } ?? false }
        if resolved(model) { return }
        do {
            _ = try await call(device, BlueZNames.device, "Connect", timeout: timeout)
        } catch .failed(let name, _) where name == BlueZErrorName.alreadyConnected {
            // Connected already; wait for the services below.
        } catch .timeout(let what) {
            _ = try? await call(device, BlueZNames.device, "Disconnect", timeout: .seconds(5))
            throw .timeout("connecting: \(what)")
        }
        guard await wait(timeout: timeout, until: resolved) else {
            _ = try? await call(device, BlueZNames.device, "Disconnect", timeout: .seconds(5))
            throw .timeout("services of \(device) not resolved within \(timeout)")
        }
        await waitForGATTToSettle(device)
    }

    /// Real bluetoothd sets ServicesResolved while it is still adding GATT objects (one InterfacesAdded
    /// each); a driver that looked at once would miss services. Waits until none arrived for a moment.
    func waitForGATTToSettle(_ device: ObjectPath, quiet: Duration = .milliseconds(300), limit: Duration = .seconds(3)) async {
        let deadline = ContinuousClock.now + limit
        var count = model.characteristics.values.filter { model.device(owning: $0.path) == device }.count
        while ContinuousClock.now < deadline {
            try? await Task.sleep(for: quiet)
            let now = model.characteristics.values.filter { model.device(owning: $0.path) == device }.count
            if now == count { return }
            count = now
        }
    }

    public func disconnect(_ device: ObjectPath, timeout: Duration) async throws(BlueZError) {
        do {
            _ = try await call(device, BlueZNames.device, "Disconnect", timeout: timeout)
        } catch .notConnected {
            return
        }
    }

    /// Pairs through the registered agent (see `PairingAgent`), which is asked for passkeys and confirmations.
    public func pair(_ device: ObjectPath, timeout: Duration) async throws(BlueZError) {
        do {
            _ = try await call(device, BlueZNames.device, "Pair", timeout: timeout)
        } catch .failed(let name, _) where name == BlueZErrorName.alreadyExists {
            // Paired already.
        }
    }

    public func cancelPairing(_ device: ObjectPath) async throws(BlueZError) {
        _ = try await call(device, BlueZNames.device, "CancelPairing")
    }

    public func setTrusted(_ trusted: Bool, device: ObjectPath) async throws(BlueZError) {
        _ = try await call(device, BlueZNames.properties, "Set",
                           [.string(BlueZNames.device), "Trusted", .variant(.boolean(trusted))])
    }
}
