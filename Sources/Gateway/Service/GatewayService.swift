import BlueZ
import ESPHome
import DBus
import EventLoop
import Logging
import MQTT
import ServiceLifecycle
import Synchronization
import Wearables

/// The gateway as a service: `GatewayCore` wired to libmosquitto (`MQTTClient`, its sink and its source of requests)
/// and to BlueZ over D-Bus (`BlueZClient`, its central, and the pairing agent).
///
/// It connects what the core needs and keeps it connected: subscribes to the request topics, republishes every
/// retained message after each broker reconnect, connects to the bus (retrying while it is not there), follows
/// adapter changes, closes sample batches on time, publishes `bridge/health`, and on graceful shutdown lets the
/// devices go, marks the bridge and devices offline, flushes the durable spool and disconnects cleanly. Everything
/// the contract says about messages lives in the core and below.
public final class GatewayService: Service, Sendable {
    let core: GatewayCore
    private let client: MQTTClient
    private let logger: Logger
    private let shutdownTimeout: Duration
    /// The process's logging, whose warnings go to `bridge/logging` while the service runs.
    private let logControl: LogControl
    /// Where BlueZ's notification sockets are read and the D-Bus connection runs: the MQTT client's loop, so
    /// samples cross no thread whichever way they come.
    private let dataPath: EventLoop?

    public init(configuration: Configuration, client: MQTTClient, logger: Logger, dataPath: EventLoop? = nil,
                shutdownTimeout: Duration = .seconds(3), logControl: LogControl = .shared, frontend: BrowserFeed? = nil) {
        self.client = client
        self.dataPath = dataPath
        self.logger = logger
        self.shutdownTimeout = shutdownTimeout
        self.logControl = logControl
        core = GatewayCore(configuration: configuration, sink: client, logger: logger,
                           unavailable: "BlueZ is not reachable on the \(Self.busAddress(configuration)) bus yet",
                           logControl: logControl, frontend: frontend)
    }

    /// For a service manager: broker and BlueZ state, devices connected (`SystemdSupervisor`).
    public func status() async -> ServiceStatus { await core.serviceStatus() }

    public func run() async throws {
        // Retain As Published: a request published retained is refused and cleared however it arrives (GatewayCore).
        for filter in core.topics.requestSubscriptions { try client.subscribe(filter, qos: .atLeastOnce, retainAsPublished: true) }
        for filter in core.extensionSubscriptions { try client.subscribe(filter, qos: .atLeastOnce) }
        let credentials = AcceptedCredentials(core.configuration)
        client.onConnect { [core, logger] in
            core.brokerConnected()
            core.republishAll()
            // Unstructured: the broker's onConnect hook is synchronous (on the loop thread) and starts async work.
            Task {
                // A fresh report at once: none was published while the broker was away.
                await core.publishHealth()
                // Off the data-path loop: a later refusal of these credentials is then retried (even after a restart).
                do { try credentials.remember() } catch {
                    logger.warning("cannot record that the broker accepted the credentials",
                                   metadata: ["path": "\(credentials.path)", "error": "\(error)"])
                }
            }
        }
        let bridgeLogging = BridgeLogging(topics: core.topics, sink: core.sink)
        logControl.forwardWarnings { bridgeLogging.publish($0) }
        defer { logControl.forwardWarnings(nil) }
        try await withGracefulShutdownHandler {
            try await withThrowingTaskGroup(of: Void.self) { group in
                let lanes = RequestLanes(quickLimit: Self.requestsInFlight, longLimit: Self.longRequestsInFlight)
                group.addTask { await self.serveRequests(from: self.client.messages, lanes: lanes) }
                // The web interface's requests take the same path, lanes included (its own quick bound: its loop).
                if let feed = self.core.frontend { group.addTask { await self.serveRequests(from: feed.requests, lanes: lanes) } }
                group.addTask { await self.core.publishRecords() }
                group.addTask { await self.connectBlueZ() }
                group.addTask { await self.periodicWork() }
                if let site = self.core.site { group.addTask { await Self.siteWork(site, time: self.core.time) } }
                // The client alone ends the service: after a close, or with a fatal error. (Waiting for any
                // child instead let the end of the message stream win the race against a fatal error.)
                defer { group.cancelAll() }
                try await self.client.run()
            }
        } onGracefulShutdown: { [self] in
            logger.info("shutting down: disconnecting devices, publishing offline state and flushing the durable spool")
            // Unstructured: the graceful-shutdown handler is synchronous; run() awaits the client's end this starts.
            Task {
                let finals = await core.stop(timeout: .milliseconds(1500))
                client.requestClose(finalMessages: finals, timeout: shutdownTimeout)
            }
        }
    }

    // MARK: BlueZ side

    private static func busAddress(_ configuration: Configuration) -> BusAddress {
        switch configuration.bluez.bus {
        case .system: .system
        case .session: .session
        case .address(let address): .address(address)
        }
    }

    /// Connects to the bus (retrying while it is not there), starts the BlueZ model, the devices and the pairing
    /// agent, and follows the adapters.
    private func connectBlueZ() async {
        let busAddress = Self.busAddress(core.configuration)
        var connection: BusConnection?
        while connection == nil && !Task.isCancelled {
            do {
                connection = try BusConnection(busAddress, logger: Logger(label: "dbus"), loop: dataPath)
            } catch {
                logger.error("cannot connect to D-Bus; retrying in 5 s", metadata: ["bus": "\(busAddress)", "error": "\(error)"])
                try? await Task.sleep(for: .seconds(5))
            }
        }
        guard let connection else { return }
        let bluez = BlueZClient(connection: connection, logger: Logger(label: "bluez"), loop: dataPath)
        do {
            try await bluez.start()
        } catch {
            logger.error("cannot subscribe to BlueZ", metadata: ["error": "\(error)"])
            return
        }
        let adapterEvents = bluez.events()
        // ESPHome Bluetooth proxies (radios:) beside the local adapter, on the data-path loop (a loop of their own
        // when the service runs without one, as some tests do).
        let radioLoop = core.configuration.radios.isEmpty ? nil : dataPath ?? (try? EventLoop.started(name: "radios"))
        var proxies: [ESPHomeCentral] = []
        if let radioLoop {
            for radio in core.configuration.radios {
                var settings = ProxyClient.Settings(name: radio.name, host: radio.host, port: radio.port, key: radio.keyBytes)
                settings.clientInfo = "wear2mqtt \(core.configuration.gateway.id)"
                proxies.append(ESPHomeCentral(settings, loop: radioLoop, logger: Logger(label: "radios")))
            }
        }
        for proxy in proxies { proxy.start() }
        if proxies.isEmpty {
            await core.attach(bluez)
        } else {
            await core.attach(RadioSet([bluez] + proxies), radios: RadioRouter(local: bluez, proxies: proxies))
        }
        guard let manager = core.manager else { return }
        let agent = PairingAgent(client: bluez) { await manager.answer($0) }
        let watchdog = core.startRadioWatchdog(local: bluez, proxies: proxies)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await agent.keepRegistered() }
            if let watchdog { group.addTask { await watchdog.run() } }
            group.addTask { [core] in
                for await event in adapterEvents { core.adapterChanged(event) }
            }
        }
    }

    // MARK: MQTT side

    /// Each request in a child task of its own, in one of two lanes decided as it arrives (`admitRequest`):
    /// - quick requests (bridge queries, device commands): at most `requestsInFlight` at once; a flood waits in the
    ///   client's buffer, then in TCP and at the broker (the client stops reading while its buffer is full), instead
    ///   of becoming thousands of tasks;
    /// - long ones (scans, syncs, firmware updates, recording fetches): at most `longRequestsInFlight`, each holding
    ///   only its own lane's slot, so 64 scans never hold up a `health_check`; one more is answered `BUSY` at once
    ///   rather than waited for, which would stop the loop behind it.
    /// Finished children are collected as a limit is reached: a plain task group keeps each until `next()` takes it
    /// (before issue 24 this loop never did, and each request left about 2.5 KB behind for good).
    private func serveRequests(from messages: some AsyncSequence<IncomingMessage, Never>, lanes: RequestLanes) async {
        await withTaskGroup(of: Void.self) { group in
            // Children in the group, finished or not: collected once more are there than can run, so finished ones
            // never pile up.
            var children = 0
            for await message in messages {
                guard core.admit(message), let admitted = core.admitRequest(message) else { continue }
                if !admitted.runsLong {
                    while lanes.quickIsFull, await group.next() != nil { children -= 1 }
                }
                guard lanes.take(long: admitted.runsLong) else {
                    core.refuseAsBusy(admitted, longRunning: lanes.longRunning)
                    continue
                }
                group.addTask {
                    await self.core.answer(admitted)
                    lanes.release(long: admitted.runsLong)
                }
                children += 1
                while children > lanes.quickLimit + lanes.longLimit, await group.next() != nil { children -= 1 }
            }
        }
    }

    /// A site's reports and the referee's decisions, every `roaming.report_interval_s`.
    private static func siteWork(_ site: SiteCoordinator, time: TimeSource) async {
        while !Task.isCancelled {
            try? await time.sleep(for: site.settings.reportInterval)
            await site.tick()
        }
    }

    /// Enough for every device's commands at once; a flood beyond it waits its turn.
    static let requestsInFlight = 64
    /// Long requests at once: a sync or firmware update per device of a large installation, and a scan.
    static let longRequestsInFlight = 64

    /// Closes sample batches on time and publishes `bridge/health` (every `gateway.health_interval_s`, or what
    /// `bridge/request/options` set since).
    private func periodicWork() async {
        // From the last report, so a shorter interval set meanwhile takes effect at once.
        let time = core.time
        var lastHealth = time.now
        while !Task.isCancelled {
            // Until the next sample batch closes, else a second: Home Assistant's calm entities and the health
            // report tolerate that, and an idle gateway wakes once a second.
            let next = core.flushDueSamples()
            let wait = next.map { max(.milliseconds(5), $0 - time.now) } ?? .seconds(1)
            try? await time.sleep(for: min(wait, .seconds(1)))
            if time.now >= lastHealth + .seconds(core.runtime.healthIntervalSeconds) {
                lastHealth = time.now
                await core.publishHealth()
            }
        }
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
