import BlueZ
import Firmware
import MQTT
import Wearables

/// Answers every request of the contract: parses it, checks the `allow` policy and what the device's driver
/// supports, and hands it to the layer the command's description names (the gateway's firmware updates, the device's session, or
/// its driver through the device manager). Every request gets exactly one response, an error one when anything is
/// wrong, and a refused request changes nothing.
///
/// It holds no state of its own; the device manager appears once the Bluetooth stack is reachable.
public struct RequestRouter: Sendable {
    let registry: DriverRegistry
    let allow: Configuration.AllowSection
    let firmware: Configuration.DFUSection
    /// nil until the Bluetooth stack is reachable.
    let manager: @Sendable () -> DeviceManager?
    /// Why there is no manager yet, for `ADAPTER_UNAVAILABLE`.
    let unavailable: String
    /// `device/options` changed a device's options: the contract's side applies them (batching, QoS).
    let optionsChanged: @Sendable (String, DeviceOptions) -> Void
    /// What `bridge/request/options` changes besides device options.
    let runtime: RuntimeOptions
    /// The answer to `health_check`.
    let health: @Sendable () async -> HealthCheck

    public init(registry: DriverRegistry, allow: Configuration.AllowSection, firmware: Configuration.DFUSection,
                unavailable: String, manager: @escaping @Sendable () -> DeviceManager?,
                optionsChanged: @escaping @Sendable (String, DeviceOptions) -> Void,
                runtime: RuntimeOptions, health: @escaping @Sendable () async -> HealthCheck) {
        self.registry = registry
        self.allow = allow
        self.firmware = firmware
        self.unavailable = unavailable
        self.manager = manager
        self.optionsChanged = optionsChanged
        self.runtime = runtime
        self.health = health
    }

    /// The response to `request`.
    public func answer(_ request: ContractRequest) async -> OutgoingMessage {
        let result: Result<[String: DeviceValue], CommandError>
        switch request.arguments {
        case .failure(let error):
            result = .failure(error)
        case .success(let arguments):
            do throws(CommandError) {
                switch request.target {
                case .bridge(let name): result = .success(try await bridgeRequest(name, arguments))
                case .device(let id, let command): result = .success(try await deviceRequest(id, command, arguments))
                }
            } catch {
                result = .failure(error)
            }
        }
        return request.response(result)
    }

    private func requireManager() throws(CommandError) -> DeviceManager {
        guard let manager = manager() else { throw CommandError(.adapterUnavailable, unavailable) }
        return manager
    }

    /// Whether `allow` permits a command its description guards (one that destroys data or firmware).
    private func permits(_ guarded: CommandDescription.Guard?) -> Bool {
        switch guarded {
        case nil: true
        case .clearData: allow.clearData
        case .factoryReset: allow.factoryReset
        case .dfu: allow.dfu
        }
    }

    // MARK: Device requests

    private func deviceRequest(_ id: String, _ name: String, _ arguments: [String: DeviceValue]) async throws(CommandError) -> [String: DeviceValue] {
        let manager = try requireManager()
        guard let device = await manager.device(id) else { throw DeviceIdentifier.notFound(id) }
        // The id as managed (ids are compared in any case); the answer still goes to the topic the request named.
        let id = device.id
        let driver = registry.driver(named: device.driver)
        let contractArguments = try driver?.contractArguments(for: name, arguments) ?? arguments
        let command = try DeviceCommandParser.parse(command: name, arguments: contractArguments, registry: registry)
        // Decided once, from the description: the driver's own, else (the driver does not list it) the contract's or
        // another family's, so a disabled command is FORBIDDEN before it is NOT_SUPPORTED.
        let own = driver?.driverDescription.command(command.name)
        let described = own ?? registry.commandsByName[command.name]
        guard permits(described?.allow) else {
            throw CommandError(.forbidden, "\(command.name) is disabled; set allow.\(command.name): true in the configuration to permit it")
        }
        guard let described, driver == nil || own != nil else {
            throw CommandError(.notSupported, "\(device.driver) devices do not support \(command.name)")
        }
        let value: DeviceValue
        switch (described.route, command) {
        case (.gateway, .named("dfu", let arguments)):
            value = try await manager.updateFirmware(try await firmwareOrder(arguments), id: id)
        case (.gateway, _):
            value = try await manager.cancelFirmwareUpdate(id: id)
        case (.session, let command):
            value = try await manager.setConnected(command.name == "connect", id: id)
        case (.driver, _), (.pairing, _):
            value = try await manager.execute(command, id: id)
        }
        if case .object(let object) = value { return object }
        return ["result": value]
    }

    /// The package `request/dfu` names, checked before anything reaches the device (`FirmwareUpdateOrder.load`).
    private func firmwareOrder(_ arguments: [String: DeviceValue]) async throws(CommandError) -> FirmwareUpdateOrder {
        guard let file = arguments["file"]?.text, let sha256 = arguments["sha256"]?.text else {
            throw CommandError(.invalidPayload, "dfu needs file and sha256")
        }
        return try await FirmwareUpdateOrder.load(file: file, sha256: sha256, from: firmware)
    }

    // MARK: Bridge requests

    private func firmwareList() async throws(CommandError) -> [String: DeviceValue] {
        ["packages": .list(try await FirmwareCatalog.listOffLoop(firmware))]
    }

    private func bridgeRequest(_ name: String, _ arguments: [String: DeviceValue]) async throws(CommandError) -> [String: DeviceValue] {
        let request = try BridgeRequest(name: name, arguments: arguments)
        // These do not need the Bluetooth stack (options only when they name no device).
        switch request {
        case .listFirmware: return try await firmwareList()
        case .healthCheck: return await health().object
        case .options(let change) where change.devices.isEmpty: return try await options(change)
        default: break
        }
        let manager = try requireManager()
        switch request {
        case .listFirmware:
            return try await firmwareList()
        case .healthCheck:
            return await health().object
        case .options(let change):
            return try await options(change, manager: manager)
        case .scan(let scan):
            let filter = DiscoveryFilter(serviceUUIDs: scan.filter.uuids, rssi: scan.filter.rssi.map { Int16(clamping: $0) },
                                         pattern: scan.filter.name)
            let found = try await manager.scan(duration: .seconds(scan.durationSeconds), filter: filter)
            return ["devices": .list(found.map(DeviceValue.object))]
        case .stopScan:
            await manager.stopScan()
            return [:]
        case .addDevice(let address, let driver, let name):
            if let name { try DeviceIdentifier.validate(name) }
            let device = try await manager.add(address: address, driver: driver, name: name)
            return ["id": .text(device.id), "address": .text(device.address), "driver": .text(device.driver)]
        case .addDeviceBySerial(let serial, let driver, let name):
            let device = try await manager.add(serial: serial, driver: driver, name: name)
            return ["id": .text(device.id), "address": .text(device.address), "driver": .text(device.driver),
                    "serial": .text(serial)]
        case .removeDevice(let id):
            try await manager.remove(id: id)
            return ["id": .text(id)]
        case .renameDevice(let id, let name):
            try DeviceIdentifier.validate(name)
            try await manager.rename(id: id, to: name)
            return ["id": .text(name), "previous_id": .text(id)]
        case .pairDevice(let id):
            let outcome = try await manager.pair(id: id)
            return outcome.object ?? [:]
        case .confirmPairing(let id, let code):
            return try await manager.confirmPairing(id: id, code: code).object ?? [:]
        case .setDeviceOptions(let id, let change):
            let options = try await setOptions(change, id: id, manager: manager)
            return ["id": .text(id), "options": .object(options.object)]
        }
    }

    private func setOptions(_ change: DeviceOptionsChange, id: String, manager: DeviceManager) async throws(CommandError) -> DeviceOptions {
        let id = await manager.managedID(id)
        let options = change.applied(to: try await manager.options(id: id))
        try await manager.setOptions(id: id, options: options)
        optionsChanged(id, options)
        return options
    }

    /// `options`: every named device is checked to exist before anything changes, so a refused request changes
    /// nothing; then the gateway's options, then each device's.
    private func options(_ change: BridgeOptionsChange, manager: DeviceManager? = nil) async throws(CommandError) -> [String: DeviceValue] {
        if let manager {
            let known = await manager.managedDevices.map(\.id)
            if let unknown = change.devices.keys.sorted().first(where: { id in !known.contains { DeviceIdentifier.same($0, id) } }) {
                throw DeviceIdentifier.notFound(unknown)
            }
        }
        if let level = change.logLevel { runtime.logLevel = level }
        if let seconds = change.healthIntervalSeconds { runtime.healthIntervalSeconds = seconds }
        var devices: [String: DeviceValue] = [:]
        if let manager {
            for (id, deviceChange) in change.devices.sorted(by: { $0.key < $1.key }) {
                devices[id] = .object(try await setOptions(deviceChange, id: id, manager: manager).object)
            }
        }
        var answer: [String: DeviceValue] = [
            "log_level": .text(runtime.logLevel.rawValue),
            "health_interval_s": .integer(Int64(runtime.healthIntervalSeconds)),
        ]
        if !devices.isEmpty { answer["devices"] = .object(devices) }
        return answer
    }
}
