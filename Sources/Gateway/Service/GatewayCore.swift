import BlueZ
import DBus
import EventLoop
import FoundationEssentials
import Logging
import MQTT
import Synchronization
import Wearables

/// The gateway without its transports: devices on a `BluetoothCentral`, messages into a `MessageSink`, requests
/// through `handle(_:)`. `GatewayService` wires it to libmosquitto and BlueZ; the in-memory test kit wires it to an
/// `InMemoryCentral` and a recording sink, so the whole contract runs in a test without a process.
///
/// It holds the contract's state (`DeviceOutputMapper`, behind one lock: the sample hot path must not hop between
/// actors), the device manager once a central is attached, and the router. It does not connect anything, retry
/// anything at the transport level, or own a task of its own beyond the durable-record queue's consumer.
public final class GatewayCore: Sendable {
    public let configuration: Configuration
    public let topics: TopicLayout
    let sink: any MessageSink
    /// The web interface's side, when `frontend.enabled` (its statistics go into `bridge/health`).
    public let frontend: BrowserFeed?
    let registry: DriverRegistry
    /// Each driver's description as `bridge/devices` shows it, encoded once.
    let definitions: [String: DeviceValue]
    /// The clock behind every schedule, timeout and timestamp of the gateway: the system's, or a test's `ManualClock`.
    let time: TimeSource
    let logger: Logger
    let outputs: Mutex<DeviceOutputMapper>
    let attached = Mutex<(central: any BluetoothCentral, manager: DeviceManager)?>(nil)
    /// The radio watchdog once started (`startRadioWatchdog`); its statuses go into `bridge/info` and `bridge/health`.
    let radioWatchdog = Mutex<RadioWatchdogService?>(nil)
    private let records: AsyncStream<OutgoingMessage>
    private let recordQueue: AsyncStream<OutgoingMessage>.Continuation
    /// Which queued records are stored, for drivers that must not let a device forget records before (`emitDurably`).
    let durableRecords = DurableRecordTracker()
    private let started: ContinuousClock.Instant
    private let countsSince: Mutex<ContinuousClock.Instant>
    /// Each device's last state document, kept across restarts (`DeviceStateArchive`).
    private let deviceStates: DeviceStateStore
    /// The documents of the last run, until the device list says which devices are still managed (`attach`).
    private let keptStates: Mutex<[String: DeviceStateDocument]>
    /// The documents' revision last written, and when; nil until the kept ones are restored (before that, a save
    /// would replace the file with less than it holds).
    private let savedStates = Mutex<(revision: UInt64, at: ContinuousClock.Instant)?>(nil)
    /// How often changing documents are written at most.
    static let stateSaveInterval: Duration = .seconds(5)
    /// Requests published retained: refused and cleared, never run (`RetainedRequests`).
    private let retainedRequests = Mutex(RetainedRequests())
    /// Said in `ADAPTER_UNAVAILABLE` answers while no central is attached.
    private let unavailable: String
    /// Home Assistant discovery and calm entity states; nil with `homeassistant.enabled: false`.
    private let homeAssistant: HomeAssistantExtension?
    /// The features beside the core, each seen only through its hooks (`GatewayExtension`), in this order: the site
    /// (which narrows what the others see), Home Assistant, metrics.
    let extensions: [any GatewayExtension]
    /// Of `extensions`, those the sample path asks (most samples meet none).
    private let stateGates: [any GatewayExtension]
    private let eventListeners: [any GatewayExtension]
    /// The packages in `dfu.dir` offered as firmware updates, read again at every broker connection.
    private let firmwareOffers = Mutex<[FirmwareOffer]>([])
    /// `bridge/devices` is due: one publication for a burst of changes (the devices of config.yaml connecting one
    /// after another at start-up), and none when the list did not change.
    private let deviceListDue = Mutex<(running: Bool, pending: Bool, force: Bool, last: [UInt8]?)>((false, false, false, nil))
    /// How long changes to the device list gather before it is published.
    static let deviceListSettling: Duration = .milliseconds(300)

    /// What `bridge/request/options` changes while the gateway runs.
    public let runtime: RuntimeOptions
    /// Prometheus metrics; nil with `metrics.enabled: false`, so no command is timed for them.
    public let metrics: GatewayMetrics?
    /// This gateway's part in a site of gateways; nil with `roaming.enabled: false` (docs/roaming.md).
    public let site: SiteCoordinator?

    public init(configuration: Configuration, sink: any MessageSink, registry: DriverRegistry = WearableDrivers.all,
                time: TimeSource = .system, logger: Logger = Logger(label: "gateway"),
                unavailable: String = "the Bluetooth stack is not reachable yet",
                logControl: LogControl = LogControl(level: .info), frontend: BrowserFeed? = nil) {
        self.configuration = configuration
        runtime = RuntimeOptions(healthIntervalSeconds: configuration.gateway.healthIntervalSeconds, log: logControl)
        // The web interface sees every message the broker is sent, from the core and its extensions alike.
        let sink: any MessageSink = frontend.map { FeedingSink(broker: sink, feed: $0) } ?? sink
        self.sink = sink
        self.frontend = frontend
        self.registry = registry
        definitions = Dictionary(uniqueKeysWithValues: registry.drivers.map { ($0.name, $0.driverDescription.deviceValue) })
        self.time = time
        started = time.now
        countsSince = Mutex(time.now)
        self.logger = logger
        self.unavailable = unavailable
        topics = TopicLayout(base: configuration.mqtt.baseTopic)
        metrics = configuration.metrics.enabled ? GatewayMetrics(drivers: registry) : nil
        site = configuration.roaming.enabled
            ? SiteCoordinator(gatewayID: configuration.gateway.id, room: configuration.gateway.room,
                              settings: configuration.roaming.settings, layout: topics,
                              sharesCredentials: configuration.sharesCredentialsWithTheSite, sink: sink, time: time,
                              logger: Logger(label: "site")) : nil
        outputs = Mutex(DeviceOutputMapper(messages: ContractMessages(topics: topics), heartRateVariability: configuration.hrv))
        (records, recordQueue) = AsyncStream.makeStream(of: OutgoingMessage.self)
        deviceStates = DeviceStateStore(stateDirectory: configuration.gateway.stateDirectory)
        keptStates = Mutex(deviceStates.load(logger: logger))
        homeAssistant = configuration.homeassistant.enabled
            ? HomeAssistantExtension(
                publisher: HomeAssistantPublisher(configuration.homeassistant, topics: topics, gatewayID: configuration.gateway.id,
                                                  stateDirectory: configuration.gateway.stateDirectory,
                                                  roaming: configuration.roaming.enabled, radios: !configuration.radios.isEmpty),
                statusTopic: configuration.homeassistant.statusTopic, sink: sink, time: time) : nil
        let this = GatewayCoreReference()
        self.this = this
        router = RequestRouter(
            registry: registry, allow: configuration.allow, firmware: configuration.dfu, unavailable: unavailable,
            manager: { this.core?.manager },
            optionsChanged: { id, options in this.core?.apply(options, to: id) },
            runtime: runtime,
            health: { await this.core?.healthCheck() ?? HealthCheck(
                mqttConnected: false, bluetoothAvailable: false, devicesManaged: 0, devicesConnected: 0, uptimeSeconds: 0) })
        let extensions: [(any GatewayExtension)?] = [site, homeAssistant, metrics]
        self.extensions = extensions.compactMap { $0 }
        stateGates = self.extensions.filter(\.gatesDeviceState)
        eventListeners = self.extensions.filter(\.hearsDeviceEvents)
        this.core = self
        homeAssistant?.bind(self)
        site?.onViewChanged { [weak self] becameReferee in self?.siteViewChanged(becameReferee: becameReferee) }
    }

    var messages: ContractMessages { outputs.withLock { $0.messages } }

    /// Where MQTT 5 requests may have their answers published: not on the base, nor on Home Assistant's discovery
    /// prefix and status topic while the gateway publishes discovery there.
    var responseTopics: ResponseTopicRule {
        let homeAssistant = configuration.homeassistant
        return ResponseTopicRule(layout: topics, ownedPrefixes: homeAssistant.enabled ? [homeAssistant.discoveryPrefix, homeAssistant.statusTopic] : [])
    }

    public var manager: DeviceManager? { attached.withLock { $0?.manager } }

    public var central: (any BluetoothCentral)? { attached.withLock { $0?.central } }

    /// Built once, on a weak reference to this core (its closures must not keep it alive).
    public let router: RequestRouter
    private let this: GatewayCoreReference

    /// `bridge/request/health_check`'s answer, from the broker link, the adapters and the devices as they are now.
    func healthCheck() async -> HealthCheck {
        var managed = 0
        var connected = 0
        var bluetooth = false
        if let (central, manager) = attached.withLock({ $0 }) {
            bluetooth = central.model.adapters.values.contains { $0.powered }
            for device in await manager.managedDevices {
                managed += 1
                if await manager.connectionState(id: device.id) == .connected { connected += 1 }
            }
        }
        return HealthCheck(mqttConnected: sink.statistics.connected, bluetoothAvailable: bluetooth, devicesManaged: managed,
                           devicesConnected: connected, uptimeSeconds: Int64((time.now - started).components.seconds))
    }

    // MARK: Devices

    /// The Bluetooth stack is reachable: builds the device manager on it and starts the sessions of the configured
    /// and stored devices.
    public func attach(_ central: any BluetoothCentral, radios: RadioRouter? = nil) async {
        let manager = DeviceManager(
            bluez: central, registry: registry, store: DeviceStore(stateDirectory: configuration.gateway.stateDirectory),
            filter: deviceFilter, adapter: configuration.bluez.adapter.map(AdapterSelector.init), radios: radios,
            firmwarePackages: configuration.dfu, output: { [weak self] in self?.handle($0) },
            durableRecords: durableRecords.durableRecords, time: time, logger: Logger(label: "devices"))
        attached.withLock { $0 = (central, manager) }
        for feature in extensions { await feature.managerAttached(manager) }
        await manager.start(configured: configuredDevices,
                            configuredOptions: Dictionary(configuration.devices.compactMap { entry in entry.options.map { (entry.address, $0) } },
                                                          uniquingKeysWith: { first, _ in first }),
                            beforeSessions: { [weak self] managed in self?.restoreKeptStates(of: managed) })
        publishBridgeInfo()
    }

    /// The documents of the last run for the devices still managed, taken before their sessions report (so the
    /// first `connecting` merges into the whole document) and published again, for a broker that lost them.
    private func restoreKeptStates(of managed: Set<String>) {
        let kept = keptStates.withLock { kept in
            defer { kept = [:] }
            return kept.filter { managed.contains($0.key) }
        }
        let published = publishingState(of: kept.keys)
        let messages = outputs.withLock { outputs in
            outputs.restore(kept)
            return outputs.retainedDeviceMessages(of: published)
        }
        savedStates.withLock { $0 = (outputs.withLock { $0.documentsRevision } &- 1, time.now - Self.stateSaveInterval) }
        for message in messages { sink.publish(message) }
    }

    /// Of `ids`, the devices whose state and availability this gateway publishes: all of them alone; in a site only
    /// those it owns while current with the site (`GatewayExtension.publishesState`).
    private func publishingState(of ids: some Sequence<String>) -> Set<String> {
        let now = time.now
        return Set(ids.filter { id in extensions.allSatisfy { $0.publishesState(of: id, at: now) } })
    }

    /// Topics the extensions need besides the contract's requests.
    public var extensionSubscriptions: [String] { extensions.flatMap(\.subscriptions) }

    /// After every broker connection, before `republishAll`: the extensions' own records first.
    public func brokerConnected() { for feature in extensions { feature.brokerConnected() } }

    /// Writes the documents when they changed since the last write and `stateSaveInterval` passed (or `force`).
    /// Called from the periodic work and at stop, never on the data path.
    func saveDeviceStates(force: Bool = false, at now: ContinuousClock.Instant? = nil) {
        let now = now ?? time.now
        let revision = outputs.withLock { $0.documentsRevision }
        let due = savedStates.withLock { saved -> Bool in
            guard let last = saved, last.revision != revision, force || now - last.at >= Self.stateSaveInterval else { return false }
            saved = (revision, now)
            return true
        }
        guard due else { return }
        let documents = outputs.withLock { $0.documents }
        do {
            try deviceStates.save(documents)
        } catch {
            logger.error("cannot keep the device states", metadata: ["path": "\(deviceStates.path)", "error": "\(error)"])
        }
    }

    private var deviceFilter: DeviceFilter {
        let filter = configuration.filter
        return DeviceFilter(allowAddresses: Set(filter.allowAddresses.compactMap(BluetoothAddress.init)),
                            denyAddresses: Set(filter.denyAddresses.compactMap(BluetoothAddress.init)),
                            allowDrivers: Set(filter.allowDrivers), denyDrivers: Set(filter.denyDrivers))
    }

    /// The devices of config.yaml. One without `driver:` gets its driver from its advertisement once the stack has
    /// seen it (`DeviceManager` detects it), and its default id with it.
    private var configuredDevices: [ManagedDevice] {
        configuration.devices.map { entry in
            let driver = entry.driver ?? ManagedDevice.driverToDetect
            let id = entry.name ?? (entry.driver.map { DeviceIdentifier.defaultID(driver: $0, address: entry.address) } ?? "")
            return ManagedDevice(id: id, address: entry.address, driver: driver, name: entry.name,
                                 options: entry.options?.applied(to: DeviceOptions()) ?? DeviceOptions(), fromConfiguration: true,
                                 configure: entry.configure)
        }
    }

    /// A report from the device side, turned into messages.
    func handle(_ output: ManagerOutput) {
        let now = time.now
        // In a site, a device's topics are written only by the gateway that holds it and is current with the site:
        // samples are dropped elsewhere; its state is kept up to date everywhere, but published only by its owner
        // (another gateway's RSSI or `disconnected`, a released or cut-off owner's last words, would stand over the
        // owner's). What a gateway hears of a device it does not hold goes into its own site report instead.
        var notOwned: String?
        if case .device(let id, let report) = output, !stateGates.allSatisfy({ $0.publishesState(of: id, at: now) }) {
            if case .event(.sample) = report { return }
            notOwned = id
        }
        let unixMilliseconds = time.unixMilliseconds
        var actions = outputs.withLock { $0.map(output, now: now, unixMilliseconds: unixMilliseconds) }
        if let id = notOwned { actions = DeviceOutputMapper.Actions(actions.filter { !isDeviceMessage($0, of: id) }) }
        perform(&actions)
        guard case .device(let id, .event(let event)) = output else { return }
        for feature in eventListeners { feature.deviceEvent(event, of: id, at: now, unixMilliseconds: unixMilliseconds) }
    }

    /// A message on a device's own topics (`<base>/<id>`, `<base>/<id>/…`).
    private func isDeviceMessage(_ action: DeviceOutputMapper.Action, of id: String) -> Bool {
        guard case .publish(let message) = action else { return false }
        let state = topics.device(id)
        return message.topic == state || message.topic.hasPrefix(state + "/")
    }

    private func perform(_ actions: inout DeviceOutputMapper.Actions) {
        // Drained: iterating the collection, or reading it by index, copied every message in it.
        actions.drain { action in
            switch action {
            case .publish(let message): sink.publish(message)
            case .publishDurable(let message):
                durableRecords.queued()
                recordQueue.yield(message)
            case .publishDeviceList: publishDeviceList()
            }
        }
    }

    func apply(_ options: DeviceOptions, to id: String) {
        for message in outputs.withLock({ $0.setOptions(options, for: id) }) { sink.publish(message) }
    }

    /// Durable records in order, each handed to the sink without waiting for the one before to be stored: records
    /// handed over while the spool's sync runs share the next one (group commit), so a sync of thousands of records
    /// costs a few fdatasyncs, not one each. At most `recordWindow` are unsettled at a time. Runs until `stop`, then
    /// waits until every record handed over is settled.
    public func publishRecords() async {
        let (settlements, settle) = AsyncStream.makeStream(of: Void.self)
        var settled = settlements.makeAsyncIterator()
        var handedOver: UInt64 = 0, unsettled = 0
        for await record in records {
            while unsettled >= Self.recordWindow, await settled.next() != nil { unsettled -= 1 }
            handedOver += 1
            unsettled += 1
            sink.publishDurable(record) { [durableRecords, logger, number = handedOver] result in
                if case .failure(let error) = result {
                    logger.error("a durable record could not be stored", metadata: ["topic": "\(record.topic)", "error": "\(error)"])
                }
                durableRecords.finished(number, stored: (try? result.get()) != nil)
                settle.yield()
            }
        }
        while unsettled > 0, await settled.next() != nil { unsettled -= 1 }
        settle.finish()
        durableRecords.end()
    }

    /// How many durable records may be handed to the sink before the oldest of them is stored.
    static let recordWindow = 1024

    // MARK: Requests

    /// Whether `handle(_:)` should see `message`, decided in the order messages arrive (before requests run
    /// concurrently): in a site, the site's records are taken here and a request is let through only on the gateway
    /// that answers it (docs/roaming.md, "Exactly once").
    public func admit(_ message: IncomingMessage) -> Bool {
        if extensions.contains(where: { $0.take(message) }) { return false }
        let incoming = topics.classify(message.topic)
        if case .notOurs = incoming { return true }
        return extensions.allSatisfy { $0.answers(incoming) }
    }

    /// A request of the contract as it arrived, read once: the request and whether it runs long (a scan, a sync, a
    /// firmware update, a recording fetch), which the service serves apart from the quick ones so they never wait
    /// behind it.
    public struct AdmittedRequest: Sendable {
        public let request: ContractRequest
        public let runsLong: Bool
    }

    /// Reads one incoming message in the order messages arrive (after `admit`): nil when there is nothing to answer
    /// (not a request, a retained request's cleared echo).
    public func admitRequest(_ message: IncomingMessage) -> AdmittedRequest? {
        guard var request = ContractRequest(message, layout: topics, responseTopics: responseTopics) else { return nil }
        switch retainedRequests.withLock({ $0.decide(message, at: time.now) }) {
        case .handle: break
        case .ignore: return nil
        case .refuseAndClear(let clearing):
            sink.publish(clearing)
            request.arguments = .failure(RetainedRequests.refusal)
        }
        return AdmittedRequest(request: request, runsLong: runsLong(request))
    }

    func runsLong(_ request: ContractRequest) -> Bool {
        guard case .success(let arguments) = request.arguments else { return false }
        switch request.target {
        case .bridge(let name): return name == "scan"
        case .device(_, let command): return registry.runsLong(command, arguments)
        }
    }

    /// Answers an admitted request.
    public func answer(_ admitted: AdmittedRequest) async {
        let started = time.now
        let answer = await router.answer(admitted.request)
        let ok = answer.payload.starts(with: Self.okPrefix), duration = time.now - started
        for feature in extensions { feature.answered(admitted.request, ok: ok, duration: duration) }
        sink.publish(answer)
    }

    /// `BUSY` for a long request that finds every long slot taken, without running it.
    public func refuseAsBusy(_ admitted: AdmittedRequest, longRunning: Int) {
        let error = CommandError(.busy, "\(longRunning) long requests (scans, syncs, firmware updates, recording fetches) are "
                                 + "running; try again when one has finished")
        for feature in extensions { feature.answered(admitted.request, ok: false, duration: .zero) }
        sink.publish(admitted.request.response(error: error))
    }

    /// Answers one incoming message if it is a request of the contract; an extension's own message (Home Assistant's
    /// `online`) goes to it; ignores anything else. It does not ask whether this gateway of a site answers: a caller
    /// that must (the service, the in-memory site) calls `admit` first, in arrival order.
    public func handle(_ message: IncomingMessage) async {
        if extensions.contains(where: { $0.take(message) }) { return }
        guard let admitted = admitRequest(message) else { return }
        await answer(admitted)
    }

    // MARK: Bridge messages

    /// After every (re)connect of the broker: it may have restarted without persistence.
    public func republishAll() {
        sink.publish(OutgoingMessage(retainedJSON: BridgeState.online.message(topics: topics)))
        for feature in extensions { feature.republish() }
        publishBridgeInfo()
        publishDriverCatalog()
        publishDeviceList(forceDiscovery: true)
        for message in retainedDeviceMessages() { sink.publish(message) }
    }

    /// Every device's retained state and availability; in a site only those of the devices this gateway holds while
    /// it is current with the site, so a reconnect (after a cut, when another gateway may own them now) never puts
    /// back what another gateway has published since.
    private func retainedDeviceMessages() -> [OutgoingMessage] {
        let published = publishingState(of: outputs.withLock { Array($0.documents.keys) })
        return outputs.withLock { $0.retainedDeviceMessages(of: published) }
    }

    /// Reads `dfu.dir` again off the data path (this runs on the MQTT loop's connect callback, and a package file
    /// may block); when the offers changed, the device list and its discovery follow.
    func refreshFirmwareOffers() {
        let section = configuration.dfu
        // Unstructured: called from synchronous paths; the file access runs off the loop and applies when done.
        Task { [weak self] in
            guard let offers = await FirmwareCatalog.offersOffLoop(section), let self else { return }
            let changed = self.firmwareOffers.withLock { current in
                defer { current = offers }
                return current != offers
            }
            if changed { self.publishDeviceList(forceDiscovery: true) }
        }
    }

    /// Everything Home Assistant needs again after its `online`: the firmware offers read afresh, the device list
    /// and discovery forced, every device's retained state.
    func republishForHomeAssistant() async {
        if let offers = await FirmwareCatalog.offersOffLoop(configuration.dfu) { firmwareOffers.withLock { $0 = offers } }
        if let (central, manager) = attached.withLock({ $0 }) { await publishDeviceList(manager, central, forceDiscovery: true) }
        for message in retainedDeviceMessages() { sink.publish(message) }
    }

    /// Whether this gateway publishes the bridge's own topics (`bridge/info`, `bridge/devices`, `bridge/health`,
    /// the bridge's Home Assistant device): always alone, in a site only as its referee, for the whole site.
    var publishesBridgeTopics: Bool { extensions.allSatisfy(\.publishesBridgeTopics) }

    /// In a site, the referee's view changed: a new referee takes the bridge's topics over, a referee refreshes the
    /// site's device list.
    func siteViewChanged(becameReferee: Bool) {
        guard becameReferee else {
            if publishesBridgeTopics { publishDeviceList() }
            return
        }
        for feature in extensions { feature.tookBridgeTopics() }
        publishBridgeInfo()
        publishDriverCatalog()
        publishDeviceList(forceDiscovery: true)
    }

    /// `bridge/drivers`: what never changes while the process runs, so only after a (re)connect or a takeover.
    func publishDriverCatalog() {
        guard publishesBridgeTopics else { return }
        sink.publish(OutgoingMessage(topic: topics.bridgeDrivers, payload: DriverCatalog.json(registry), qos: .atLeastOnce, retain: true,
                                     properties: MQTTProperties(contentType: "application/json")))
    }

    public func publishBridgeInfo() {
        guard publishesBridgeTopics else { return }
        let central = central
        let adapters = radioEntries(central?.model.adapters.values.sorted { $0.path < $1.path } ?? [])
        let info = DeviceValue.object([
            "version": .text(Wear2MQTTVersion.current),
            "gateway_id": .text(configuration.gateway.id),
            "adapters": .list(adapters.map(DeviceValue.object)),
            "bluez_available": .flag(central?.isServiceAvailable ?? false),
            "config": .object(configuration.bridgeInfoSummary.mapValues(\.deviceValue)),
        ])
        sink.publish(OutgoingMessage(topic: topics.bridgeInfo, payload: JSONWriter.encode(info), qos: .atLeastOnce, retain: true,
                                     properties: MQTTProperties(contentType: "application/json")))
    }

    /// Adapter power and discovery changes: `bridge/event` adapter_changed and a fresh `bridge/info`.
    public func adapterChanged(_ event: BlueZModelEvent) {
        switch event {
        case .adapterAdded(let adapter), .adapterChanged(let adapter, _):
            sink.publish(messages.bridgeEvent(BridgeEvent(.adapterChanged, data: Self.adapterEntry(adapter))))
            publishBridgeInfo()
        case .adapterRemoved(let path):
            sink.publish(messages.bridgeEvent(BridgeEvent(.adapterChanged, data: ["id": .text(path.rawValue), "removed": true])))
            publishBridgeInfo()
        case .reset:
            publishBridgeInfo()
        default:
            break
        }
    }

    static func adapterEntry(_ adapter: AdapterInfo) -> [String: DeviceValue] {
        ["id": .text(adapter.id), "address": adapter.address.map { .text($0.rawValue) } ?? .null,
         "powered": .flag(adapter.powered), "discovering": .flag(adapter.discovering)]
    }

    /// `bridge/devices`, built from the manager's list (asynchronously: the manager is an actor).
    public func publishDeviceList(forceDiscovery: Bool = false) {
        guard let (central, manager) = attached.withLock({ $0 }) else {
            if publishesBridgeTopics { sink.publish(messages.bridgeDevices([])) }
            return
        }
        let start = deviceListDue.withLock { due -> Bool in
            due.force = due.force || forceDiscovery
            due.pending = true
            defer { due.running = true }
            return !due.running
        }
        guard start else { return }
        // One publisher at a time, so an older list (or discovery) never lands after a newer one; changes that come
        // while it works are taken in one more round.
        Task {
            while true {
                try? await time.sleep(for: Self.deviceListSettling)
                let force = deviceListDue.withLock { due in
                    defer { due.force = false; due.pending = false }
                    return due.force
                }
                await publishDeviceList(manager, central, forceDiscovery: force)
                let again = deviceListDue.withLock { due in
                    if !due.pending { due.running = false }
                    return due.pending
                }
                if !again { return }
            }
        }
    }

    /// `bridge/devices`, and Home Assistant's discovery of every device whose document changed.
    func publishDeviceList(_ manager: DeviceManager, _ central: any BluetoothCentral, forceDiscovery: Bool = false) async {
        var entries: [BridgeDeviceEntry] = []
        var discovered: [DiscoveredWearable] = []
        for device in await manager.managedDevices {
            let connection = await manager.connectionState(id: device.id)
            let (document, sensors, flushed) = outputs.withLock { outputs in
                let flushed = outputs.hasOptions(for: device.id) ? [] : outputs.setOptions(device.options, for: device.id)
                return (outputs.document(device.id), outputs.sensors(of: device.id), flushed)
            }
            for message in flushed { sink.publish(message) }
            let driver = registry.driver(named: device.driver)
            let paired = BluetoothAddress(device.address).flatMap { central.model.device(address: $0)?.paired } ?? false
            entries.append(BridgeDeviceEntry(
                id: device.id, name: device.name, vendor: document.fields["manufacturer"]?.text ?? driver?.vendor,
                model: document.fields["model"]?.text, address: device.address, driver: device.driver,
                capabilities: (driver.map { Array($0.commands) } ?? []).sorted() + sensors.sorted(),
                paired: paired, connected: connection == .connected,
                radio: connection == .connected ? document.fields["radio"]?.text : nil))
            let services = BluetoothAddress(device.address).flatMap { central.model.device(address: $0) }
                .map { central.model.services(of: $0.path).map(\.uuid) } ?? []
            let expected = driver.map { ExpectedSensors.sensors($0.driverDescription, serviceUUIDs: services,
                                                                heartRateVariability: configuration.hrv.enabled) } ?? []
            var wearable = DiscoveredWearable(device: device, driver: driver, document: document,
                                              sensorsSeen: sensors.union(expected),
                                              offers: firmwareOffers.withLock { $0 }, allowDFU: configuration.allow.dfu)
            wearable.events += driver.map { ExpectedSensors.serviceEvents($0.driverDescription, serviceUUIDs: services) } ?? []
            wearable.advertisedName = BluetoothAddress(device.address).flatMap { central.model.device(address: $0) }
                .flatMap { $0.name ?? $0.alias }
            discovered.append(wearable)
        }
        // The site narrows the list before it is published and Home Assistant announces it.
        var publication = DeviceListPublication(entries: entries, discovered: discovered, force: forceDiscovery)
        for feature in extensions { feature.narrowDeviceList(&publication) }
        let list = publishesBridgeTopics ? messages.bridgeDevices(publication.entries, definitions: definitions) : nil
        // A reconnect to the broker (forced) republishes it whatever it was.
        let changed = deviceListDue.withLock { due in
            defer { due.last = list?.payload }
            return forceDiscovery || due.last != list?.payload
        }
        if changed, let list { sink.publish(list) }
        for feature in extensions { feature.deviceListPublished(publication) }
    }

    // MARK: Periodic

    /// Publishes the sample batches whose window closed and, at each `hrv.interval_s` tick, every device's
    /// heart-rate variability; answers when to look again: when the next batch closes or the next tick comes, within
    /// 200 ms while a device batches (a batch may open meanwhile), nil when nothing is timed.
    public func flushDueSamples(at now: ContinuousClock.Instant? = nil) -> ContinuousClock.Instant? {
        let now = now ?? time.now
        let unixMilliseconds = time.unixMilliseconds
        let (due, variability, next) = outputs.withLock { outputs in
            let batches = outputs.nextBatchDeadline ?? (outputs.anyDeviceBatches ? now + .milliseconds(200) : nil)
            let variability = outputs.dueVariability(at: now, unixMilliseconds: unixMilliseconds)
            let next = [batches, outputs.nextVariabilityDeadline].compactMap { $0 }.min()
            return (outputs.dueSamples(at: now), variability, next)
        }
        for message in due { sink.publish(message) }
        saveDeviceStates(at: now)
        // A derived sample of its device like any other: topic, options, batching, counts and Home Assistant.
        for (id, sample) in variability { handle(.device(id: id, .event(.sample(sample)))) }
        for feature in extensions { feature.due(at: now, unixMilliseconds: time.unixMilliseconds) }
        return next
    }

    /// `bridge/health` now. Not while the broker is away: the report would wait in the offline queue and reach
    /// subscribers stale after the reconnect, which publishes a fresh one instead (`GatewayService`).
    public func publishHealth() async {
        guard sink.statistics.connected, publishesBridgeTopics else { return }
        let counts = outputs.withLock { $0.takeMessageCounts() }
        let since = countsSince.withLock { since in
            defer { since = time.now }
            return since
        }
        let elapsed = max(0.001, Double((time.now - since).components.seconds))
        var devices: [String: HealthReport.Device] = [:]
        if let manager {
            for device in await manager.managedDevices {
                devices[device.id] = HealthReport.Device(
                    messagesPerSecond: Double(counts[device.id] ?? 0) / elapsed,
                    connected: await manager.connectionState(id: device.id) == .connected)
            }
        }
        let uptime = (time.now - started).components.seconds
        let browsers = frontend.map { feed in feed.statistics }.map { HealthReport.Frontend(browsers: $0.browsers, dropped: $0.dropped) }
        var report = HealthReport(uptimeSeconds: uptime, residentBytes: ProcessMemory.residentBytes,
                                  mqtt: HealthReport.MQTTStatus(sink.statistics), devices: devices, frontend: browsers)
        report.radios = radioHealth()
        sink.publish(messages.health(report))
    }

    // MARK: Shutdown

    /// Lets the devices go (a wearable left connected to nobody drains its battery and stays invisible to other
    /// centrals), bounded by `timeout`; answers the messages that mark the bridge and every device offline. The
    /// durable-record queue ends.
    public func stop(timeout: Duration) async -> [OutgoingMessage] {
        // Work the extensions still queued is dropped first (a site's handovers: no hold may start a session now).
        for feature in extensions { feature.stopping() }
        if let manager { await manager.stopAll(timeout: timeout) }
        saveDeviceStates(force: true)
        recordQueue.finish()
        // In a site the bridge stays up with the other gateways, and only the devices this one held go offline
        // (the referee gives them to another gateway once this one's record is gone).
        let bridge = extensions.contains(where: \.keepsBridgeOnline) ? [] : [OutgoingMessage(retainedJSON: BridgeState.offline.message(topics: topics))]
        let published = publishingState(of: outputs.withLock { Array($0.documents.keys) })
        return bridge + extensions.flatMap { $0.leaving() } + outputs.withLock { $0.offlineMessages(of: published) }
    }
}
