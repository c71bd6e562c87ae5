import BlueZ
import DBus
import FoundationEssentials
import Logging
import Wearables

/// `device/pair` and `device/pair/confirm`: BlueZ pairing with a passkey, or a driver's own pairing on the link.
extension DeviceManager {
    /// `device/pair`: starts BlueZ pairing; answers `code_required` when the device wants a passkey typed in
    /// (then `device/pair/confirm` continues), `paired` when it needed none.
    /// A driver whose devices pair in their own protocol (GoFIT's code on the band) takes both requests itself,
    /// as its commands `pair` and `pair_confirm`, on the connected link.
    public func pair(id: String) async throws(CommandError) -> DeviceValue {
        let id = managedID(id)
        guard let device = devices[id], let address = BluetoothAddress(device.address) else { throw notFound(id) }
        if pairsInDriver(device), let session = sessions[id] {
            return try await session.execute(.named(PairingMethod.showCodeCommand, [:]))
        }
        guard let adapter, let info = bluez.model.device(address: address, adapter: adapter.path) else {
            throw CommandError(.deviceDisconnected, "BlueZ has not seen \(id) yet; bring it in range and try again")
        }
        if info.paired { return .object(["state": "paired"]) }
        let flow = PairingFlow()
        pairings[info.path.rawValue] = flow
        let bluez = bluez
        let path = info.path
        // Unstructured: pairing outlives the request while the agent asks for the code; `flow` answers the request.
        Task {
            do throws(BlueZError) {
                try await bluez.pair(path)
                await flow.finish(.success(()))
            } catch {
                await flow.finish(.failure(CommandError(.pairingFailed, "pairing failed: \(error)")))
            }
        }
        let first = await flow.firstOutcome()
        switch first {
        case .codeRequired: return .object(["state": "code_required"])
        case .finished(.success): pairings[path.rawValue] = nil; output(.bridgeEvent(type: "device_paired", data: ["id": .text(id)])); return .object(["state": "paired"])
        case .finished(.failure(let error)): pairings[path.rawValue] = nil; throw error
        }
    }

    /// `device/pair/confirm`: the code the user read on the device.
    public func confirmPairing(id: String, code: String) async throws(CommandError) -> DeviceValue {
        let id = managedID(id)
        if let device = devices[id], pairsInDriver(device), let session = sessions[id] {
            let result = try await session.execute(.named(PairingMethod.confirmCodeCommand, ["code": .text(code)]))
            output(.bridgeEvent(type: "device_paired", data: ["id": .text(id)]))
            return result
        }
        guard let device = devices[id], let address = BluetoothAddress(device.address),
              let info = bluez.model.device(address: address), let flow = pairings[info.path.rawValue] else {
            throw CommandError(.invalidValue, "id: no pairing of \(id) is waiting for a code; send device/pair first")
        }
        guard let passkey = UInt32(code), code.count <= 6 else {
            throw .invalidValue(field: "code", "must be the digits shown on the device")
        }
        await flow.provide(passkey)
        let outcome = await flow.completion()
        pairings[info.path.rawValue] = nil
        switch outcome {
        case .success:
            output(.bridgeEvent(type: "device_paired", data: ["id": .text(id)]))
            return .object(["state": "paired"])
        case .failure(let error): throw error
        }
    }

    func pairsInDriver(_ device: ManagedDevice) -> Bool {
        registry.driver(named: device.driver)?.driverDescription.pairing == .codeShownOnDevice
    }

    /// The agent's handler: BlueZ asks while a `device/pair` is running.
    public func answer(_ request: PairingRequest) async -> PairingAnswer {
        switch request {
        case .passkey(let device):
            guard let flow = pairings[device.rawValue] else { return .reject }
            return await flow.waitForPasskey().map(PairingAnswer.passkey) ?? .reject
        case .confirmation(let device, _), .authorization(let device):
            return pairings[device.rawValue] != nil ? .accept : .reject
        case .serviceAuthorization(let device, _):
            return devices.values.contains { BluetoothAddress($0.address).map { bluez.model.device(address: $0)?.path == device } ?? false } ? .accept : .reject
        case .pinCode, .displayPasskey, .displayPinCode:
            return .reject
        }
    }
}
