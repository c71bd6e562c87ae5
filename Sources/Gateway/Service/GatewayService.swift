import BlueZ
import DBus
import Foundation
import Logging
import MQTT
import ServiceLifecycle
import Synchronization
import Wearables

/// The gateway: MQTT on one side, BlueZ and the device sessions on the other, the contract between them.
///
/// It announces the bridge (`bridge/state`, `info`, `devices`) and republishes every retained message after
/// each broker reconnect; answers requests concurrently (a slow device only holds its own queue); turns device
/// events into samples, gestures, events, durable records and the retained state; and on graceful shutdown
/// marks itself and its devices offline, flushes the durable spool and disconnects cleanly.
public final class GatewayService: Service, Sendable {
    private let configuration: Configuration
    private let client: MQTTClient
    private let logger: Logger
    private let topics: TopicLayout
    private let messages: ContractMessages
    private let state = Mutex(GatewayState())
    private let manager = Mutex<DeviceManager?>(nil)
    private let bluez = Mutex<BlueZClient?>(nil)
    private let records: AsyncStream<OutgoingMessage>
    private let recordQueue: AsyncStream<OutgoingMessage>.Continuation
    private let started = ContinuousClock.now
    private let shutdownTimeout: Duration
    private let healthInterval: Duration

    public init(configuration: Configuration, client: MQTTClient, logger: Logger,
                shutdownTimeout: Duration = .seconds(3), healthInterval: Duration = .seconds(60)) {
        self.configuration = configuration
        self.client = client
        self.logger = logger
        self.shutdownTimeout = shutdownTimeout
        self.healthInterval = healthInterval
        topics = TopicLayout(base: configuration.mqtt.baseTopic)
        messages = ContractMessages(topics: topics)
        (records, recordQueue) = AsyncStream.makeStream(of: OutgoingMessage.self)
    }

    public func run() async throws {
        for filter in topics.requestSubscriptions { try client.subscribe(filter, qos: .atLeastOnce) }
        client.onConnect { [self] in republishAll() }
        try await withGracefulShutdownHandler {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await self.serveRequests() }
                group.addTask { await self.publishRecords() }
                group.addTask { await self.connectBlueZ() }
                group.addTask { await self.periodicWork() }
                // The client alone ends the service: after a close, or with a fatal error. (Waiting for any
                // child instead let the end of the message stream win the race against a fatal error.)
                defer { group.cancelAll() }
                try await self.client.run()
            }
        } onGracefulShutdown: { [self] in
            logger.info("shutting down: disconnecting devices, publishing offline state and flushing the durable spool")
            Task {
                // Devices are let go (a wearable left connected to nobody drains its battery and stays
                // invisible to other centrals); bounded, so a device that does not answer delays nothing much.
                if let manager = manager.withLock({ $0 }) { await manager.stopAll(timeout: .milliseconds(1500)) }
                var finals = [OutgoingMessage(retainedJSON: BridgeState.offline.message(topics: topics))]
                for id in state.withLock({ Array($0.documents.keys) }) { finals.append(messages.availability(id, online: false)) }
                client.requestClose(finalMessages: finals, timeout: shutdownTimeout)
                recordQueue.finish()
            }
        }
    }

    // MARK: BlueZ side

    private var busAddress: BusAddress {
        switch configuration.bluez.bus {
        case .system: .system
        case .session: .session
        case .address(let address): .address(address)
        }
    }

    /// Connects to the bus (retrying while it is not there), starts the BlueZ model, the pairing agent and
    /// the device sessions.
    private func connectBlueZ() async {
        var connection: BusConnection?
        while connection == nil && !Task.isCancelled {
            do {
                connection = try BusConnection(busAddress, logger: Logger(label: "dbus"))
            } catch {
                logger.error("cannot connect to D-Bus; retrying in 5 s", metadata: ["bus": "\(busAddress)", "error": "\(error)"])
                try? await Task.sleep(for: .seconds(5))
            }
        }
        guard let connection else { return }
        let client = BlueZClient(connection: connection, logger: Logger(label: "bluez"))
        do {
            try await client.start()
        } catch {
            logger.error("cannot subscribe to BlueZ", metadata: ["error": "\(error)"])
            return
        }
        bluez.withLock { $0 = client }
        let manager = DeviceManager(
            bluez: client, registry: WearableDrivers.all, store: DeviceStore(stateDirectory: configuration.gateway.stateDirectory),
            filter: deviceFilter, adapter: configuration.bluez.adapter.map(AdapterSelector.init),
            firmwarePackages: configuration.dfu, output: { [self] in handle($0) }, logger: Logger(label: "devices"))
        self.manager.withLock { $0 = manager }
        let agent = PairingAgent(client: client) { await manager.answer($0) }
        await manager.start(configured: configuredDevices)
        publishBridgeInfo()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await agent.keepRegistered() }
            group.addTask { await self.followAdapters(client) }
        }
    }

    private var deviceFilter: DeviceFilter {
        let filter = configuration.filter
        return DeviceFilter(allowAddresses: Set(filter.allowAddresses.compactMap(BluetoothAddress.init)),
                            denyAddresses: Set(filter.denyAddresses.compactMap(BluetoothAddress.init)),
                            allowDrivers: Set(filter.allowDrivers), denyDrivers: Set(filter.denyDrivers))
    }

    /// The devices of config.yaml. One without `driver:` gets its driver from its advertisement once BlueZ has
    /// seen it (`DeviceManager` detects it), and its default id with it.
    private var configuredDevices: [ManagedDevice] {
        configuration.devices.map { entry in
            let driver = entry.driver ?? ManagedDevice.driverToDetect
            let id = entry.name ?? (entry.driver.map { DeviceIdentifier.defaultID(driver: $0, address: entry.address) } ?? "")
            return ManagedDevice(id: id, address: entry.address, driver: driver, name: entry.name, fromConfiguration: true,
                                 configure: entry.configure)
        }
    }

    /// Adapter power and discovery changes: `bridge/event` adapter_changed and a fresh `bridge/info`.
    private func followAdapters(_ client: BlueZClient) async {
        for await event in client.events() {
            switch event {
            case .adapterAdded(let adapter), .adapterChanged(let adapter, _):
                publish(messages.bridgeEvent(BridgeEvent(.adapterChanged, data: adapterEntry(adapter))))
                publishBridgeInfo()
            case .adapterRemoved(let path):
                publish(messages.bridgeEvent(BridgeEvent(.adapterChanged, data: ["id": .text(path.rawValue), "removed": true])))
                publishBridgeInfo()
            case .reset:
                publishBridgeInfo()
            default:
                break
            }
        }
    }

    private func adapterEntry(_ adapter: AdapterInfo) -> [String: DeviceValue] {
        ["id": .text(adapter.id), "address": adapter.address.map { .text($0.rawValue) } ?? .null,
         "powered": .flag(adapter.powered), "discovering": .flag(adapter.discovering)]
    }

    // MARK: Device side → MQTT

    private func handle(_ output: ManagerOutput) {
        switch output {
        case .device(let id, .event(let event)):
            handle(event, from: id)
        case .device(let id, .connection(let connection)):
            let online = connection == .connected
            let document = state.withLock { state -> DeviceStateDocument? in
                state.update(id) { $0.setConnection(connection.rawValue) }
            }
            if let document { publish(messages.state(id, document)) }
            if connection == .connected || connection == .disconnected {
                publish(messages.availability(id, online: online))
                publish(messages.bridgeEvent(BridgeEvent(online ? .deviceConnected : .deviceDisconnected, data: ["id": .text(id)])))
                if !online {
                    for publication in state.withLock({ $0.batcher.flush(device: id) }) { publishSamples(publication) }
                }
                publishDeviceList()
            }
        case .deviceListChanged:
            publishDeviceList()
        case .deviceRetired(let id):
            state.withLock { state in
                state.documents[id] = nil
                _ = state.batcher.flush(device: id)
                state.options[id] = nil
            }
            for message in messages.removal(id) { publish(message) }
        case .bridgeEvent(let type, let data):
            guard let kind = BridgeEvent.Kind(rawValue: type) else { return }
            publish(messages.bridgeEvent(BridgeEvent(kind, data: data)))
        }
    }

    private func handle(_ event: WearableEvent, from id: String) {
        switch event {
        case .sample(let sample):
            // The hot path: one lock for the batcher, the device's options and its message count.
            let (publications, options) = state.withLock { state in
                state.sensorsSeen[id, default: []].insert(sample.sensor.rawValue)
                let publications = state.batcher.add(sample, device: id, at: .now)
                state.count(id, publications.count)
                return (publications, state.options[id] ?? DeviceOptions())
            }
            for publication in publications { client.publish(sampleMessage(publication, options)) }
        case .gesture(let name, let timestamp):
            publish(messages.gesture(id, name: name, timestamp: timestamp), device: id)
        case .event(let name, let timestamp, let details):
            publish(messages.event(id, name: name, timestamp: timestamp, details: details), device: id)
        case .record(let record):
            recordQueue.yield(messages.record(id, record))
        case .state, .progress:
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let document = state.withLock { state in
                state.update(id) { document in
                    let changed = document.apply(event)
                    return document.setLastSeen(now) || changed
                }
            }
            if let document { publish(messages.state(id, document), device: id) }
            // bridge/devices shows the vendor and model the device reports.
            if case .state(let patch) = event, patch["manufacturer"] != nil || patch["model"] != nil { publishDeviceList() }
        }
    }

    private func publishSamples(_ publication: SamplePublication) {
        let options = state.withLock { $0.options[publication.device] } ?? DeviceOptions()
        publish(sampleMessage(publication, options), device: publication.device)
    }

    private func sampleMessage(_ publication: SamplePublication, _ options: DeviceOptions) -> OutgoingMessage {
        messages.samples(publication, qos: QoS(rawValue: options.sampleQoS) ?? .atMostOnce, retain: options.retainSamples)
    }

    private func publish(_ message: OutgoingMessage, device: String? = nil) {
        if let device { state.withLock { $0.count(device) } }
        client.publish(message)
    }

    /// Durable records, one at a time and in order: each is on disk before the next is taken.
    private func publishRecords() async {
        for await record in records {
            do {
                try await client.publishDurable(record)
            } catch {
                logger.error("a durable record could not be stored", metadata: ["topic": "\(record.topic)", "error": "\(error)"])
            }
        }
    }

    // MARK: Retained messages

    /// After every (re)connect: the broker may have restarted without persistence.
    private func republishAll() {
        publish(OutgoingMessage(retainedJSON: BridgeState.online.message(topics: topics)))
        publishBridgeInfo()
        publishDeviceList()
        let documents = state.withLock { $0.documents }
        for (id, document) in documents {
            publish(messages.state(id, document))
            let online = document.fields["connection"]?.text == ConnectionState.connected.rawValue
            publish(messages.availability(id, online: online))
        }
    }

    private func publishBridgeInfo() {
        let adapters = (bluez.withLock { $0 }?.model.adapters.values.sorted { $0.path < $1.path } ?? []).map { adapterEntry($0) }
        let info = DeviceValue.object([
            "version": .text(Wear2MQTTVersion.current),
            "gateway_id": .text(configuration.gateway.id),
            "adapters": .list(adapters.map(DeviceValue.object)),
            "bluez_available": .flag(bluez.withLock { $0 }?.isServiceAvailable ?? false),
            "config": .object(configuration.bridgeInfoSummary.mapValues(\.deviceValue)),
        ])
        publish(OutgoingMessage(topic: topics.bridgeInfo, payload: Self.json(info), qos: .atLeastOnce, retain: true,
                                properties: MQTTProperties(contentType: "application/json")))
    }

    private func publishDeviceList() {
        guard let manager = manager.withLock({ $0 }) else {
            publish(messages.bridgeDevices([]))
            return
        }
        Task {
            let devices = await manager.managedDevices
            var entries: [BridgeDeviceEntry] = []
            for device in devices {
                let connection = await manager.connectionState(id: device.id)
                let (document, sensors) = state.withLock { ($0.document(device.id), $0.sensorsSeen[device.id] ?? []) }
                let driver = WearableDrivers.all.driver(named: device.driver)
                let paired = BluetoothAddress(device.address).flatMap { bluez.withLock { $0 }?.model.device(address: $0)?.paired } ?? false
                entries.append(BridgeDeviceEntry(
                    id: device.id, name: device.name, vendor: document.fields["manufacturer"]?.text ?? driver?.vendor,
                    model: document.fields["model"]?.text, address: device.address, driver: device.driver,
                    capabilities: (driver.map { Array($0.commands) } ?? []).sorted() + sensors.sorted(),
                    paired: paired, connected: connection == .connected))
                state.withLock { state in
                    if state.options[device.id] == nil {
                        state.options[device.id] = device.options
                        _ = state.batcher.setWindow(.milliseconds(device.options.batchMilliseconds), forDevice: device.id)
                    }
                }
            }
            publish(messages.bridgeDevices(entries))
        }
    }

    // MARK: Periodic

    /// Closes sample batches on time and publishes `bridge/health`.
    private func periodicWork() async {
        var nextHealth = ContinuousClock.now + healthInterval
        while !Task.isCancelled {
            let wait = state.withLock { $0.batcher.nextDeadline }.map { max(.milliseconds(5), $0 - .now) } ?? .milliseconds(200)
            try? await Task.sleep(for: min(wait, .milliseconds(200)))
            for publication in state.withLock({ $0.batcher.due(at: .now) }) { publishSamples(publication) }
            if ContinuousClock.now >= nextHealth {
                nextHealth = .now + healthInterval
                await publishHealth()
            }
        }
    }

    private func publishHealth() async {
        let (counts, since) = state.withLock { state in
            defer {
                state.messageCounts = [:]
                state.countsSince = .now
            }
            return (state.messageCounts, state.countsSince)
        }
        let elapsed = max(0.001, Double((ContinuousClock.now - since).components.seconds))
        var devices: [String: HealthReport.Device] = [:]
        if let manager = manager.withLock({ $0 }) {
            for device in await manager.managedDevices {
                devices[device.id] = HealthReport.Device(
                    messagesPerSecond: Double(counts[device.id] ?? 0) / elapsed,
                    connected: await manager.connectionState(id: device.id) == .connected)
            }
        }
        let uptime = (ContinuousClock.now - started).components.seconds
        publish(messages.health(HealthReport(uptimeSeconds: uptime, residentBytes: ProcessMemory.residentBytes,
                                             mqtt: HealthReport.MQTTStatus(client.statistics), devices: devices)))
    }

    // MARK: Requests

    private func serveRequests() async {
        await withTaskGroup(of: Void.self) { group in
            for await message in client.messages {
                guard let request = ContractRequest(message, layout: topics) else { continue }
                group.addTask { await self.answer(request) }
            }
        }
    }

    private func answer(_ request: ContractRequest) async {
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
        client.publish(request.response(result))
    }

    private func requireManager() throws(CommandError) -> DeviceManager {
        guard let manager = manager.withLock({ $0 }) else {
            throw CommandError(.adapterUnavailable, "BlueZ is not reachable on the \(busAddress) bus yet")
        }
        return manager
    }

    /// Commands that destroy data or firmware, and the `allow` key that permits each.
    private func isAllowed(_ command: String) -> Bool {
        switch command {
        case "clear_data": configuration.allow.clearData
        case "factory_reset": configuration.allow.factoryReset
        case "dfu": configuration.allow.dfu
        default: true
        }
    }

    private func deviceRequest(_ id: String, _ name: String, _ arguments: [String: DeviceValue]) async throws(CommandError) -> [String: DeviceValue] {
        let manager = try requireManager()
        guard let device = await manager.managedDevices.first(where: { $0.id == id }) else {
            throw CommandError(.deviceNotFound, "no device with id \(id)")
        }
        let command = try DeviceCommandParser.parse(command: name, arguments: arguments)
        guard isAllowed(command.name) else {
            throw CommandError(.forbidden, "\(command.name) is disabled; set allow.\(command.name): true in the configuration to permit it")
        }
        if let driver = WearableDrivers.all.driver(named: device.driver), !driver.commands.contains(command.name),
           !Self.gatewayCommands.contains(command.name) {
            throw CommandError(.notSupported, "\(device.driver) devices do not support \(command.name)")
        }
        let value: DeviceValue
        switch command {
        case .named("dfu", let arguments):
            value = try await manager.updateFirmware(try firmwareOrder(arguments), id: id)
        case .named("dfu/cancel", _):
            value = try await manager.cancelFirmwareUpdate(id: id)
        default:
            value = try await manager.execute(command, id: id)
        }
        if case .object(let object) = value { return object }
        return ["result": value]
    }

    /// Commands the gateway runs itself for any driver: a firmware update speaks Nordic DFU, whoever made the
    /// device, and fails with `NOT_SUPPORTED` once connected if the device has no DFU service.
    static let gatewayCommands: Set<String> = ["dfu", "dfu/cancel"]

    /// The package `request/dfu` names, checked before anything reaches the device (`FirmwareUpdateOrder.load`).
    private func firmwareOrder(_ arguments: [String: DeviceValue]) throws(CommandError) -> FirmwareUpdateOrder {
        guard let file = arguments["file"]?.text, let sha256 = arguments["sha256"]?.text else {
            throw CommandError(.invalidPayload, "dfu needs file and sha256")
        }
        return try FirmwareUpdateOrder.load(file: file, sha256: sha256, from: configuration.dfu)
    }

    private func bridgeRequest(_ name: String, _ arguments: [String: DeviceValue]) async throws(CommandError) -> [String: DeviceValue] {
        let request = try BridgeRequest(name: name, arguments: arguments)
        let manager = try requireManager()
        switch request {
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
            var options = try await manager.options(id: id)
            if let batch = change.batchMilliseconds { options.batchMilliseconds = batch }
            if let qos = change.sampleQoS { options.sampleQoS = qos }
            if let retain = change.retainSamples { options.retainSamples = retain }
            if let notify = change.notify { options.notify = notify }
            try await manager.setOptions(id: id, options: options)
            let flushed = state.withLock { state in
                state.options[id] = options
                return state.batcher.setWindow(.milliseconds(options.batchMilliseconds), forDevice: id)
            }
            for publication in flushed { publishSamples(publication) }
            return ["id": .text(id), "options": .object([
                "batch_ms": .integer(Int64(options.batchMilliseconds)), "qos": .integer(Int64(options.sampleQoS)),
                "retain": .flag(options.retainSamples), "notify": .text(options.notify)])]
        }
    }
}

extension GatewayService {
    static func json(_ value: DeviceValue) -> [UInt8] {
        var writer = JSONWriter()
        writer.value(value)
        return writer.bytes
    }
}

extension Configuration.SummaryValue {
    var deviceValue: DeviceValue {
        switch self {
        case .text(let value): .text(value)
        case .integer(let value): .integer(Int64(value))
        case .number(let value): .number(value)
        case .flag(let value): .flag(value)
        }
    }
}
