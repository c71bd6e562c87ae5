import BlueZ
import DBus

/// AgentManager1 and Device1.Pair / CancelPairing: the agent BlueZ asks for a passkey or a confirmation and the
/// errors pairing ends with (`src/agent.c`, `pair_device`, `new_authentication_return` in `src/device.c`).
extension SimulatedBluetoothDaemon {
    /// How long bluetoothd's SMP waits for the user before the pairing times out.
    static let pairingTimeout: Duration = .seconds(30)

    func registerAgent(path: String, capability: String, client: String) async throws(BlueZErrorReply) {
        try await applyFaults(nil, method: "RegisterAgent")
        guard ObjectPath(path).isValid else { throw .invalidArguments }
        do {
            try agents.register(owner: client, path: path, capability: capability)
        } catch {
            throw error == .alreadyExists ? .alreadyExists : .invalidArguments
        }
    }

    func unregisterAgent(path: String, client: String) async throws(BlueZErrorReply) {
        try await applyFaults(nil, method: "UnregisterAgent")
        do {
            try agents.unregister(owner: client, path: path)
        } catch {
            throw .doesNotExist
        }
    }

    func requestDefaultAgent(path: String, client: String) async throws(BlueZErrorReply) {
        try await applyFaults(nil, method: "RequestDefaultAgent")
        do {
            try agents.requestDefault(owner: client, path: path)
        } catch {
            throw .doesNotExist
        }
    }

    /// Connects if needed, runs the association the device's pairing method and the agent's capability give,
    /// then sets Paired and Bonded and answers once services are resolved.
    func pair(_ address: BluetoothAddress, client: String) async throws(BlueZErrorReply) {
        let device = try device(address)
        try await applyFaults(device, method: "Pair")
        if device.pairing != nil { throw .inProgress }
        if device.bonded { throw .alreadyExists }
        device.temporary = false
        let id = nextPairingID
        nextPairingID += 1
        let agent = agents.agent(for: client)
        device.pairing = SimulatedDevice.PairingInFlight(id: id, agent: agent, waiter: nil)
        defer { if device.pairing?.id == id { device.pairing = nil } }

        if !device.link.isConnected {
            guard powered else { throw .notReady }
            if case .start(let attempt) = device.link.connect() { beginAttempt(device, attempt) }
            try await waitForConnection(device)
        }
        guard let link = device.link.currentLink else { throw .authenticationCanceled }
        let step = PairingAssociation.step(for: device.settings.pairing.method, agent: agent?.capability)
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, BlueZErrorReply>, Never>) in
            device.pairing?.waiter = continuation
            let path = device.path
            let passkey = device.settings.passkey
            let bus = self.bus
            track { daemon in
                let result = await Self.runAssociation(step, agent: agent, devicePath: path, passkey: passkey, bus: bus)
                await daemon.finishAssociation(address, id: id, result: result)
            }
        }
        try outcome.get()
        guard device.link.currentLink == link else { throw .authenticationCanceled }
        device.paired = true
        device.bonded = true
        setDeviceProperties(device, ["Paired": true, "Bonded": true])
        if !device.servicesResolved {
            let resolved = await withCheckedContinuation { continuation in device.resolutionWaiters.append(continuation) }
            // `browse_request_complete` disregards browse errors for Pair: pairing itself succeeded.
            _ = resolved
        }
    }

    /// The association's result reaches the waiting Pair, unless CancelPairing or the link got there first.
    func finishAssociation(_ address: BluetoothAddress, id: Int, result: Result<Void, BlueZErrorReply>) {
        guard let device = devices[address], device.pairing?.id == id, let waiter = device.pairing?.waiter else { return }
        device.pairing?.waiter = nil
        waiter.resume(returning: result)
    }

    func cancelPairing(_ address: BluetoothAddress) async throws(BlueZErrorReply) {
        let device = try device(address)
        try await applyFaults(device, method: "CancelPairing")
        guard let pairing = device.pairing else { throw .doesNotExist }
        if let agent = pairing.agent {
            try? bus.callWithoutReply(destination: agent.owner, path: ObjectPath(agent.path),
                                      interface: BlueZInterfaces.agent, member: "Cancel")
        }
        if let waiter = pairing.waiter {
            device.pairing?.waiter = nil
            waiter.resume(returning: .failure(.authenticationCanceled))
        }
    }

    /// What SMP and the agent make of one association. The agent's own error names are not passed on: BlueZ
    /// answers any rejection as AuthenticationFailed.
    static func runAssociation(_ step: PairingStep, agent: AgentRegistry.Agent?, devicePath: ObjectPath, passkey: UInt32,
                               bus: BusConnection) async -> Result<Void, BlueZErrorReply> {
        let smpExchange: Duration = .milliseconds(50)
        switch step {
        case .justWorks:
            try? await Task.sleep(for: smpExchange)
            return .success(())
        case .fail:
            try? await Task.sleep(for: smpExchange)
            return .failure(.authenticationFailed)
        case .requestPasskey, .requestConfirmation:
            guard let agent else { return .failure(.authenticationFailed) }
            let arguments: [DBusValue] = step == .requestPasskey ? [.objectPath(devicePath)] : [.objectPath(devicePath), .uint32(passkey)]
            do {
                let reply = try await bus.call(destination: agent.owner, path: ObjectPath(agent.path), interface: BlueZInterfaces.agent,
                                               member: step == .requestPasskey ? "RequestPasskey" : "RequestConfirmation",
                                               arguments: arguments, timeout: pairingTimeout)
                if step == .requestPasskey {
                    guard case .uint32(let entered)? = reply.first else { return .failure(.authenticationFailed) }
                    guard entered == passkey else { return .failure(.authenticationFailed) }
                }
                try? await Task.sleep(for: smpExchange)
                return .success(())
            } catch .timeout {
                return .failure(.authenticationTimeout)
            } catch {
                return .failure(.authenticationFailed)
            }
        case .displayPasskey:
            guard let agent else { return .failure(.authenticationFailed) }
            // bluetoothd shows the passkey through the agent without waiting; the user then types it on the device.
            try? bus.callWithoutReply(destination: agent.owner, path: ObjectPath(agent.path), interface: BlueZInterfaces.agent,
                                      member: "DisplayPasskey", arguments: [.objectPath(devicePath), .uint32(passkey), .uint16(0)])
            try? await Task.sleep(for: .milliseconds(200))
            return .success(())
        }
    }
}
