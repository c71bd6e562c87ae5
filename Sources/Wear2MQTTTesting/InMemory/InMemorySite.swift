import Gateway
import MQTT
import Synchronization
import Wearables

/// Several in-memory gateways (`GatewayHarness`, each with a central of its own) on one in-memory broker and one
/// `ManualClock`: every message any of them publishes goes, in one order for all, to every gateway still connected,
/// with retained messages kept for gateways that join later and each gateway's will published when it is killed —
/// the parts of a broker a site of gateways relies on (docs/roaming.md). Each gateway's own `RecordingSink` still
/// records what it published.
///
/// The site's time is the clock's, and only the test moves it (`advance`, `run(until:)`): a report interval at a
/// time, each connected gateway reporting what it heard (`setLevels`) and its referee deciding at every interval,
/// and before the clock moves on the work that report caused is done — the requests it let through answered, the
/// holds and releases carried out. So a loaded machine's stalls are never the site's time: a release the machine
/// was slow to carry out cannot outlast the new owner's wait for its handoff. The devices still run on the
/// system's clock: what they do on their own (a strap's samples, a sync's pages) is waited for with `until`, woken by
/// the broker's messages and the centrals' changes, the site's time standing still.
///
/// It does not model QoS, message expiry, or a network between broker and gateways: delivery is immediate.
public final class InMemorySite: Sendable, Stoppable {
    public let gateways: [String: GatewayHarness]
    /// The site's time: every gateway's core reads it, and only `advance` and `run(until:)` move it.
    public let clock: ManualClock
    /// How often each gateway reports (`roaming.report_interval_s`), the step the site's time moves by.
    public let reportInterval: Duration
    /// Told of every message through the broker, every change of a gateway's central and every request answered:
    /// what `until` waits on.
    public let changes = ChangeNotifier()
    private let hub = Mutex(Hub())
    /// The level each gateway hears each device at, fed to its coordinator before each report.
    private let levels = Mutex<[String: [String: Int]]>([:])
    /// When the gateways report next.
    private let nextReport: Mutex<ContinuousClock.Instant>
    private let answers = Mutex(Answers())

    struct Hub: Sendable {
        var queue: [(from: String, message: OutgoingMessage)] = []
        var retained: [String: OutgoingMessage] = [:]
        var log: [(from: String, message: OutgoingMessage)] = []
        var connected: Set<String> = []
        var draining = false
        /// Messages delivered that set work going in a gateway (a site record taken, a request let through): a
        /// round of `settled` that saw none arrive has seen the end of that work.
        var started: UInt64 = 0
    }

    /// The requests being answered, each on a task of its own as the service runs them; long ones (a sync, a
    /// firmware update) run on the devices' time and are not waited for.
    struct Answers: Sendable {
        var running: [UInt64: (task: Task<Void, Never>, long: Bool)] = [:]
        var next: UInt64 = 0
    }

    /// `configuration`: YAML shared by every gateway (devices, `roaming:` settings); each gets `gateway.id` (and
    /// `gateway.room`, the same name) from `ids`; `mqtt` adds lines to each one's `mqtt:` section.
    public init(ids: [String], configuration: String, mqtt: [String] = [], clock: ManualClock = ManualClock()) throws {
        self.clock = clock
        var gateways: [String: GatewayHarness] = [:]
        for id in ids {
            gateways[id] = try GatewayHarness(configuration: configuration, time: clock.timeSource, gatewayID: id, room: id,
                                              mqtt: mqtt)
        }
        self.gateways = gateways
        reportInterval = gateways.values.first?.core.site?.settings.reportInterval ?? RoamingSettings().reportInterval
        nextReport = Mutex(clock.now + reportInterval)
        for (id, gateway) in gateways {
            gateway.sink.forwardPublications { [weak self] message in self?.publish(message, from: id) }
            gateway.changes.forward(to: changes)
        }
    }

    /// Connects `id` to the broker (it receives every retained message first, as a new subscription does) and starts
    /// it with its Bluetooth stack; it reports from the next report interval on.
    public func start(_ id: String) async {
        guard let gateway = gateways[id] else { return }
        let retained = hub.withLock { hub in
            hub.connected.insert(id)
            return hub.retained.keys.sorted().compactMap { hub.retained[$0] }
        }
        for message in retained { deliver(message, to: gateway) }
        gateway.core.site?.connected()
        await gateway.start()
    }

    /// The gateway's process dies: it is cut off the broker, which publishes its will, and it reports no more.
    public func kill(_ id: String) {
        hub.withLock { _ = $0.connected.remove(id) }
        guard let gateway = gateways[id] else { return }
        publish(SiteCoordinator.will(gatewayID: id, layout: gateway.core.topics), from: "broker", force: true)
    }

    /// The level (dBm) each gateway hears `device` at from now on, as BlueZ would report it: fed to the gateway's
    /// site coordinator before each of its reports. A gateway left out does not hear the device.
    public func setLevels(of device: String, _ levels: [String: Int]) {
        self.levels.withLock { $0[device] = levels }
    }

    /// Publishes as a client would (a user's request), under the base topic's full name.
    public func publish(_ message: OutgoingMessage) { publish(message, from: "client", force: true) }

    /// Every message published on `topic`, with its publisher, in the broker's order.
    public func messages(on topic: String) -> [(from: String, message: OutgoingMessage)] {
        hub.withLock { $0.log.filter { $0.message.topic == topic } }
    }

    public func retained(_ topic: String) -> OutgoingMessage? { hub.withLock { $0.retained[topic] } }

    // MARK: Time

    /// Moves the site's time on by `duration`: the gateways report at every report interval on the way, and the
    /// work each report caused is done before the clock moves on (see `settled`). False if that work did not end
    /// within the real-time guard of `settled`.
    @discardableResult
    public func advance(by duration: Duration) async -> Bool {
        let end = clock.now + duration
        while nextReport.withLock({ $0 }) <= end {
            guard await report() else { return false }
        }
        await clock.advance(by: end - clock.now)
        return await settled()
    }

    /// Lets the site's time pass a report interval at a time until `condition` holds, checked before the first and
    /// after each report once its work is done; false if it still does not after `limit` of the site's time. For
    /// what the site decides and carries out (an assignment, a hold, a registry entry adopted); what a device does
    /// on its own clock is `until`'s.
    public func run(until condition: () async throws -> Bool, limit: Duration = .seconds(30)) async rethrows -> Bool {
        let end = clock.now + limit
        guard await settled() else { return try await condition() }
        while true {
            if try await condition() { return true }
            guard nextReport.withLock({ $0 }) <= end, await report() else { return try await condition() }
        }
    }

    /// Returns true as soon as `condition` holds, re-checked on every message through the broker, every change of a
    /// gateway's central and every request answered, the site's time standing still: for what the devices do on
    /// the system's clock (a strap's samples, a sync's pages, a link coming up). False if it still does not after
    /// `timeout`, a failure guard in real time.
    public func until(timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async rethrows -> Bool {
        try await changes.until(timeout: timeout, condition)
    }

    /// Returns once the work the broker's messages set going so far is done: every quick request let through
    /// answered (long ones, a sync or a firmware update, run on the devices' time), every gateway's holds and
    /// releases carried out — and again for what that work published, until a round sees no new work start. A
    /// barrier: what a test checks afterwards cannot be changed by a message delivered before. False if the work did
    /// not end within `timeout`, a failure guard in real time (it never needs the site's time, which stands still).
    @discardableResult
    public func settled(timeout: Duration = .seconds(30)) async -> Bool {
        while true {
            let started = hub.withLock { $0.started }
            let quick = answers.withLock { $0.running.values.filter { !$0.long }.map(\.task) }
            let sites = hub.withLock { $0.connected }.sorted().compactMap { gateways[$0]?.core.site }
            let done = Mutex(false)
            // Unstructured: awaited through `changes` below, so the real-time guard can end the wait if it hangs.
            let work = Task { [changes] in
                for task in quick { await task.value }
                for site in sites { await site.handoversCarriedOut() }
                done.withLock { $0 = true }
                changes.changed()
            }
            guard await changes.until(timeout: timeout, { done.withLock { $0 } }) else {
                work.cancel()
                return false
            }
            let quiet = hub.withLock { $0.started == started }
                && answers.withLock { !$0.running.values.contains { !$0.long } }
            if quiet { return true }
        }
    }

    /// One report interval: the clock moves to the next report (waking what sleeps on it on the way), every
    /// connected gateway reports what it heard and its referee decides, in the order of their ids, and the work
    /// that caused is done.
    private func report() async -> Bool {
        let due = nextReport.withLock { due in
            defer { due += reportInterval }
            return due
        }
        await clock.advance(by: due - clock.now)
        let reporting = hub.withLock { $0.connected }.sorted()
        let heard = levels.withLock { $0 }
        for id in reporting {
            guard let site = gateways[id]?.core.site else { continue }
            for (device, levels) in heard.sorted(by: { $0.key < $1.key }) {
                if let rssi = levels[id] { site.heard(device, rssi: rssi) }
            }
            await site.tick()
        }
        return await settled()
    }

    // MARK: The broker

    /// One order for every message: a publication made while another is being delivered waits its turn.
    private func publish(_ message: OutgoingMessage, from publisher: String, force: Bool = false) {
        let drain = hub.withLock { hub -> Bool in
            guard force || hub.connected.contains(publisher) else { return false }
            hub.queue.append((publisher, message))
            hub.log.append((publisher, message))
            if message.retain { hub.retained[message.topic] = message.payload.isEmpty ? nil : message }
            defer { hub.draining = true }
            return !hub.draining
        }
        changes.changed()
        guard drain else { return }
        while let next = hub.withLock({ hub -> (OutgoingMessage, [String])? in
            guard !hub.queue.isEmpty else {
                hub.draining = false
                return nil
            }
            return (hub.queue.removeFirst().message, hub.connected.sorted())
        }) {
            for id in next.1 { if let gateway = gateways[id] { deliver(next.0, to: gateway) } }
        }
    }

    /// What a subscription of the gateway would receive: the site's records and the contract's requests, taken in
    /// the broker's order as the service takes them (`admit`, `admitRequest`), each request then answered on a task
    /// of its own.
    private func deliver(_ message: OutgoingMessage, to gateway: GatewayHarness) {
        let core = gateway.core
        guard let site = core.site else { return }
        let isRequest: Bool
        if case .notOurs = core.topics.classify(message.topic) { isRequest = false } else { isRequest = true }
        guard isRequest || site.topics.classify(message.topic) != nil else { return }
        let incoming = IncomingMessage(topic: message.topic, payload: message.payload, qos: message.qos, retain: message.retain,
                                       properties: message.properties)
        let admitted = core.admit(incoming)
        if !isRequest {
            hub.withLock { $0.started += 1 }
            return
        }
        guard admitted, let request = core.admitRequest(incoming) else { return }
        hub.withLock { $0.started += 1 }
        answers.withLock { answers in
            let id = answers.next
            answers.next += 1
            // Unstructured: a request's answer, as the service runs each in a child task; `settled` and `stop` await it.
            answers.running[id] = (Task { [weak self] in
                await core.answer(request)
                self?.answered(id)
            }, request.runsLong)
        }
    }

    private func answered(_ id: UInt64) {
        answers.withLock { _ = $0.running.removeValue(forKey: id) }
        changes.changed()
    }

    /// Stops every gateway, then the answers still running (a long one ends with its device's session).
    public func stop() async {
        for gateway in gateways.values { await gateway.stop() }
        let running = answers.withLock { $0.running.values.map(\.task) }
        for task in running {
            task.cancel()
            await task.value
        }
    }
}
