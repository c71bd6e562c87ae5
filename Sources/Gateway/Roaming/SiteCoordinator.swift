import EventLoop
import Logging
import MQTT
import Synchronization
import Wearables

/// This gateway's part in a site of gateways (docs/roaming.md): it reads the site's records in the order the broker
/// delivers them, says which requests are this gateway's to answer, reports what it hears, decides as referee, and
/// carries out its side of each handover through the device manager — around the pure machines `SiteOwnership`,
/// `DeviceHandover`, `SightingCollector` and `SiteRegistry`, which hold every rule.
///
/// A handover's holds and releases, and the release timer's expiry, run on one `OrderedWorkQueue` in the order the
/// broker's messages asked for them, so a quick reassignment away and back cannot release after it held again.
///
/// The site's registry (`registry/<id>`, `SiteRegistry`) carries the device list: a gateway publishes the devices it
/// manages that the registry lacks and every entry changed on it (`device/add`, `rename`, `options` on the referee,
/// which bridge requests go to; `configure` on the device's holder), the referee also the removals, and every
/// gateway applies what it reads, in order, one change at a time.
public final class SiteCoordinator: Sendable {
    public let gatewayID: String
    public let settings: RoamingSettings
    public let topics: SiteTopics
    let layout: TopicLayout
    private let room: String?
    /// `roaming.share_credentials`, already refused unless the broker link is TLS with authentication.
    private let sharesCredentials: Bool
    let sink: any MessageSink
    private let time: TimeSource
    private let logger: Logger
    private let manager = Mutex<(any SiteDeviceControl)?>(nil)
    private let state: Mutex<State>
    /// Registry changes read from the broker, applied to the device manager one at a time in their order (buffered
    /// until a manager is attached: the broker's retained entries come before the Bluetooth stack).
    private let registryChanges: AsyncStream<SiteRegistry.LocalChange>
    private let registryQueue: AsyncStream<SiteRegistry.LocalChange>.Continuation
    /// The holds and releases of handovers, and the release timers' expiries, in the order they were asked for.
    private let handoverWork = OrderedWorkQueue()
    /// The release timer sleeping for each device (the newest; an older one's epoch is outdated); nil once stopped.
    private let releaseTimers = Mutex<[String: Task<Void, Never>]?>([:])

    struct State: Sendable {
        var ownership: SiteOwnership
        var handover: DeviceHandover
        var sightings = SightingCollector()
        /// The assignment each device's handover last acted on: the previous owner of the next one. (The referee's
        /// `SiteOwnership` records its own decisions before the broker delivers them back.)
        var acted: [String: SiteAssignment] = [:]
        var connected: Set<String> = []
        var lastLevel: [String: Int] = [:]
        var registry = SiteRegistry()
        /// Each gateway's entries for the devices it holds (`devices/<gateway>`), for the referee's `bridge/devices`.
        var entries: [String: [BridgeDeviceEntry]] = [:]
        /// What this gateway last published on `devices/<id>`.
        var publishedEntries: [UInt8]?

        /// The devices this gateway holds now.
        var held: Set<String> { Set(acted.keys.filter(handover.holds)) }
        /// When the last of this gateway's own reports that came back from the broker was sent (on this clock):
        /// everything the broker sent it before that report, a newer assignment above all, has been taken by then.
        /// The send time, not the arrival: a report sent just before a stop (SIGSTOP, a frozen VM) that arrives
        /// after the return says nothing of what the site decided meanwhile.
        var ownReportEchoed: ContinuousClock.Instant?
        /// This gateway's recent reports: their `at` (wall clock, in the payload) and when they were sent.
        var sentReports: [(atMilliseconds: Int64, sent: ContinuousClock.Instant)] = []
    }

    /// Called on the broker's thread when what the site's `bridge/devices` shows may have changed (an owner, a
    /// gateway's entries, the gateways present); `becameReferee`: this gateway just took over the bridge's topics.
    public typealias ViewChanged = @Sendable (_ becameReferee: Bool) -> Void
    private final class ViewHook: Sendable {
        let call: ViewChanged
        init(_ call: @escaping ViewChanged) { self.call = call }
    }
    private let viewHook = Mutex<ViewHook?>(nil)

    public init(gatewayID: String, room: String?, settings: RoamingSettings, layout: TopicLayout, sharesCredentials: Bool,
                sink: any MessageSink, time: TimeSource, logger: Logger) {
        self.gatewayID = gatewayID
        self.room = room
        self.settings = settings
        self.layout = layout
        topics = SiteTopics(base: layout.base)
        self.sharesCredentials = sharesCredentials
        self.sink = sink
        self.time = time
        self.logger = logger
        state = Mutex(State(ownership: SiteOwnership(gatewayID: gatewayID, settings: settings),
                            handover: DeviceHandover(gatewayID: gatewayID)))
        (registryChanges, registryQueue) = AsyncStream.makeStream(of: SiteRegistry.LocalChange.self)
    }

    deinit { registryQueue.finish() }

    /// The will of a gateway in a site: its record deleted, so the others know at once that it is gone.
    public static func will(gatewayID: String, layout: TopicLayout) -> OutgoingMessage {
        OutgoingMessage(topic: SiteTopics(base: layout.base).gateway(gatewayID), payload: [], qos: .atLeastOnce, retain: true)
    }

    /// Who hears of changes to the site's view (the gateway, which republishes the bridge's topics); set once.
    public func onViewChanged(_ call: @escaping ViewChanged) {
        viewHook.withLock { $0 = ViewHook(call) }
    }

    public func attach(_ manager: any SiteDeviceControl) {
        self.manager.withLock { $0 = manager }
        let changes = registryChanges, logger = logger
        // Unstructured: reads the registry's changes for the coordinator's life (weak), from a synchronous attach.
        Task { [weak self, weak manager] in
            for await change in changes {
                guard let manager else { return }
                switch change {
                case .adopt(let entry):
                    await manager.adopt(entry)
                    // What the manager holds now (the entry, or its own where it refused it) is settled.
                    let local = await manager.device(entry.id)
                    self?.state.withLock { $0.registry.adopted(entry.id, managing: local) }
                case .remove(let id):
                    guard await manager.device(id) != nil else { continue }
                    do { try await manager.remove(id: id, announce: false) } catch {
                        logger.warning("cannot remove a device the site removed", metadata: ["id": "\(id)", "error": "\(error)"])
                    }
                }
            }
        }
    }

    /// The gateway stops: release timers end, and handover work queued or running is cancelled (the device manager
    /// stops every session next, and the gateway's will tells the site not to wait for its handoffs).
    public func stop() {
        let timers = releaseTimers.withLock { timers in
            defer { timers = nil }
            return timers.map { Array($0.values) } ?? []
        }
        for timer in timers { timer.cancel() }
        handoverWork.cancel()
    }

    /// Returns once every hold and release asked for so far has been carried out, the release timers sleeping now
    /// having run out and been acted on: for tests, which await this instead of waiting for things to settle.
    func drained() async {
        while let (device, timer) = releaseTimers.withLock({ $0?.first.map { ($0.key, $0.value) } }) {
            await timer.value
            releaseTimers.withLock { if $0?[device] == timer { $0?[device] = nil } }
        }
        await handoverWork.drained()
    }

    /// Returns once every hold and release asked for so far has been carried out; a release timer still sleeping is
    /// not waited for. For a test that moves the site's time itself (`InMemorySite`): the work one report caused is
    /// done before the clock moves on, so a release the machine was slow to carry out never outlasts the new owner's
    /// wait for its handoff.
    public func handoversCarriedOut() async {
        await handoverWork.drained()
    }

    public var isReferee: Bool { state.withLock { $0.ownership.isReferee } }
    public func owner(of device: String) -> String? { state.withLock { $0.ownership.owner(of: device) } }
    public var heldDevices: Set<String> { state.withLock(\.held) }

    /// Whether a sample of `device` read now may be published: only while this gateway holds the device, and only
    /// while its own reports come back from the broker within `lostAfter`. A gateway that was cut off (stopped,
    /// or its network gone) may have been counted gone and replaced meanwhile; the samples it reads on its return
    /// (those its sockets kept while it was away among them) would stand beside the new owner's, and it learns
    /// of the newer assignment only from the messages queued behind them. Once a report it sent after its return
    /// has come back, it has read that assignment too.
    public func publishesSamples(of device: String, at now: ContinuousClock.Instant) -> Bool {
        state.withLock { state in
            guard state.handover.holds(device) else { return false }
            return state.ownReportEchoed.map { now - $0 <= settings.lostAfter } ?? true
        }
    }

    // MARK: Messages from the broker, in its order

    /// After every broker connection: this gateway's record (retained; the will deletes it).
    public func connected() {
        let record = SiteMessages.GatewayRecord(room: room, startedMilliseconds: time.unixMilliseconds,
                                                version: Wear2MQTTVersion.current)
        sink.publish(OutgoingMessage(topic: topics.gateway(gatewayID), payload: SiteMessages.encode(record),
                                     qos: .atLeastOnce, retain: true, properties: MQTTProperties(contentType: "application/json")))
    }

    /// Whether this gateway answers a request on `topic`: a device's requests by its owner (by the latest assignment
    /// received before the request, so exactly one gateway of the site does), the bridge's and those of devices
    /// nobody owns by the referee.
    public func answers(_ incoming: IncomingTopic) -> Bool {
        state.withLock { state in
            switch incoming {
            case .deviceRequest(let device, _):
                // By the assignment as the broker delivered it (`acted`), never by the referee's own decision before
                // it comes back: only then is every request before or after it for every gateway alike. (Answering
                // by the decision, a referee that took a device from an owner cut off answered a request the old
                // owner, reading the same broker order on its return, answered too.)
                guard state.ownership.owner(of: device) != nil, let owner = state.acted[device]?.gateway else {
                    return state.ownership.isReferee
                }
                return owner == gatewayID
            case .bridgeRequest:
                return state.ownership.isReferee
            case .notOurs:
                return false
            }
        }
    }

    /// Takes a site record; false for any other message. Must be called in the order messages arrive.
    public func receive(_ message: IncomingMessage) -> Bool {
        guard let kind = topics.classify(message.topic) else { return false }
        if case .registry(let id) = kind {
            takeRegistryEntry(id, message.payload, topic: message.topic)
            return true
        }
        let actions: [DeviceHandover.Action]
        let wasReferee = isReferee
        do {
            actions = try state.withLock { state throws(SiteMessageError) in try Self.take(kind, message.payload, at: time.now, into: &state) }
        } catch {
            logger.warning("ignoring a malformed site record", metadata: ["topic": "\(message.topic)", "error": "\(error)"])
            return true
        }
        perform(actions)
        switch kind {
        case .gateway, .owner, .devices:
            viewHook.withLock { $0 }?.call(!wasReferee && isReferee)
        case .sightings:
            // A report can bring a gateway back to life (a referee returning from a cut, this one among them).
            if wasReferee != isReferee { viewHook.withLock { $0 }?.call(isReferee) }
        case .handoff, .registry:
            break
        }
        return true
    }

    private static func take(_ kind: SiteTopics.Incoming, _ payload: [UInt8], at now: ContinuousClock.Instant,
                             into state: inout State) throws(SiteMessageError) -> [DeviceHandover.Action] {
        switch kind {
        case .gateway(let id):
            var present = state.ownership.gateways
            if payload.isEmpty {
                present.remove(id)
                state.ownership.setGateways(present, at: now)
                return state.handover.gatewayLeft(id)
            }
            _ = try SiteMessages.gatewayRecord(payload)
            present.insert(id)
            state.ownership.setGateways(present, at: now)
            return []
        case .sightings(let gateway):
            guard !payload.isEmpty else { return [] }
            let (report, atMilliseconds) = try SiteMessages.sightingReport(payload, gateway: gateway)
            state.ownership.record(report, at: now)
            if gateway == state.ownership.gatewayID { state.ownReportEchoed = Self.sendTime(of: atMilliseconds, in: state, arrivedAt: now) }
            return []
        case .owner(let device):
            guard !payload.isEmpty else { return [] }
            let assignment = try SiteMessages.assignment(payload).assignment
            guard state.ownership.record(assignment, for: device) else { return [] }
            let previous = state.acted[device]?.gateway
            guard state.acted[device] != assignment else { return [] }
            state.acted[device] = assignment
            // An owner the referee counted gone (its record deleted, or its reports stopped: cut off, stopped)
            // hands nothing over; waiting `releaseTimeout` for its handoff only lengthens the gap.
            let previousPresent = assignment.reason != .ownerGone && (previous.map(state.ownership.gateways.contains) ?? false)
            return state.handover.assigned(assignment, device: device, previousOwner: previous,
                                           previousOwnerPresent: previousPresent)
        case .handoff(let device):
            guard !payload.isEmpty else { return [] }
            return state.handover.handoffArrived(try SiteMessages.handoff(payload), device: device)
        case .devices(let gateway):
            state.entries[gateway] = payload.isEmpty ? nil : try SiteMessages.deviceEntries(payload, gateway: gateway)
            return []
        case .registry:
            return []   // see `receive`
        }
    }

    // MARK: The site's device list

    /// `devices/<id>` with this gateway's entries of the devices it holds, when they changed since the last.
    public func heldEntriesMessage(_ own: [BridgeDeviceEntry]) -> OutgoingMessage? {
        let payload = state.withLock { state -> [UInt8]? in
            let held = state.held
            let payload = SiteMessages.encode(own.filter { held.contains($0.id) })
            guard payload != state.publishedEntries else { return nil }
            state.publishedEntries = payload
            return payload
        }
        return payload.map { OutgoingMessage(topic: topics.devices(gatewayID), payload: $0, qos: .atLeastOnce, retain: true,
                                             properties: MQTTProperties(contentType: "application/json")) }
    }

    /// The empty `devices/<id>` of a gateway that stops (its entries are no longer anyone's).
    public var clearedEntriesMessage: OutgoingMessage {
        OutgoingMessage(topic: topics.devices(gatewayID), payload: [], qos: .atLeastOnce, retain: true)
    }

    /// The site's `bridge/devices` as the referee writes it: every managed device of `own` (this gateway's list,
    /// which the registry keeps the same on every gateway), each as its owner describes it, with the owner named;
    /// a device whose owner has not described it yet (or that nobody owns) as this gateway knows it, not connected.
    public func siteDeviceList(_ own: [BridgeDeviceEntry]) -> [BridgeDeviceEntry] {
        state.withLock { state in
            own.map { entry in
                let owner = state.ownership.owner(of: entry.id)
                if owner == gatewayID {
                    var mine = entry
                    mine.gateway = gatewayID
                    return mine
                }
                if let owner, let described = state.entries[owner]?.first(where: { $0.id == entry.id }) { return described }
                var unknown = entry
                unknown.connected = false
                unknown.gateway = owner
                return unknown
            }
        }
    }

    private func takeRegistryEntry(_ id: String, _ payload: [UInt8], topic: String) {
        do {
            registryQueue.yield(try state.withLock { state throws(SiteMessageError) in try state.registry.received(id, payload: payload) })
        } catch {
            logger.warning("ignoring a malformed registry entry", metadata: ["topic": "\(topic)", "error": "\(error)"])
        }
    }

    /// When this gateway sent its report stamped `atMilliseconds`; the arrival for one it does not know of (a
    /// retained report of an earlier run, a wall clock standing still in tests).
    private static func sendTime(of atMilliseconds: Int64, in state: State, arrivedAt now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        state.sentReports.last { $0.atMilliseconds == atMilliseconds }?.sent ?? now
    }

    /// A report stamped `atMilliseconds` goes out now (kept for the last few, to tell when an echo was sent).
    func noteReportSent(atMilliseconds: Int64, at now: ContinuousClock.Instant) {
        state.withLock { state in
            state.sentReports.append((atMilliseconds, now))
            if state.sentReports.count > 16 { state.sentReports.removeFirst(state.sentReports.count - 16) }
        }
    }

    // MARK: Periodic

    /// Every `reportInterval`: this gateway's report, and the referee's decisions.
    public func tick() async {
        guard let manager = manager.withLock({ $0 }) else { return }
        var connected: Set<String> = []
        let adoptions = state.withLock { $0.registry.adoptions }
        let list = await manager.managedDevices
        let devices = list.map(\.id)
        for id in devices where await manager.connectionState(id: id) == .connected { connected.insert(id) }
        let wasReferee = isReferee
        let (report, decisions, registry) = state.withLock { state in
            state.ownership.setDevices(Set(devices))
            // A link held at the last report and gone now, on a device this gateway still holds: lost.
            let lost = state.connected.subtracting(connected).filter(state.handover.holds)
            state.connected = connected
            let report = state.sightings.report(gateway: gatewayID, connected: connected, lost: lost)
            let decisions = state.ownership.decide(at: time.now)
            let registry = state.registry.publications(for: list, readAtAdoptions: adoptions, asReferee: state.ownership.isReferee)
            return (report, decisions, registry)
        }
        // The referee changes with time too: one whose reports stopped (cut off) is replaced after `lostAfter`.
        if wasReferee != isReferee { viewHook.withLock { $0 }?.call(isReferee) }
        for publication in registry {
            sink.publish(OutgoingMessage(topic: topics.registry(publication.id), payload: publication.entry.map(SiteMessages.encode) ?? [],
                                         qos: .atLeastOnce, retain: true, properties: MQTTProperties(contentType: "application/json")))
        }
        let now = time.unixMilliseconds
        noteReportSent(atMilliseconds: now, at: time.now)
        // Three intervals, in whole seconds rounded up (1.5 s must not become 1 s).
        let (seconds, attoseconds) = (settings.reportInterval * 3).components
        let expiry = UInt32(clamping: max(1, seconds + (attoseconds > 0 ? 1 : 0)))
        sink.publish(OutgoingMessage(topic: topics.sightings(gatewayID), payload: SiteMessages.encode(report, atMilliseconds: now),
                                     qos: .atMostOnce, retain: true,
                                     properties: MQTTProperties(contentType: "application/json", messageExpiryInterval: expiry)))
        for (device, assignment) in decisions.sorted(by: { $0.key < $1.key }) {
            logger.info("site: device assigned", metadata: ["device": "\(device)", "gateway": "\(assignment.gateway)",
                                                            "epoch": "\(assignment.epoch)", "reason": "\(assignment.reason.rawValue)"])
            sink.publish(OutgoingMessage(topic: topics.owner(device), payload: SiteMessages.encode(assignment, sinceMilliseconds: now),
                                         qos: .atLeastOnce, retain: true, properties: MQTTProperties(contentType: "application/json")))
        }
    }

    /// A reading of a managed device's RSSI (the device manager's `onHeard`).
    public func heard(_ device: String, rssi: Int) {
        state.withLock {
            $0.sightings.heard(device, rssi: rssi)
            $0.lastLevel[device] = rssi
        }
    }

    // MARK: Carrying out a handover

    /// Holds and releases go on `handoverWork`, in the order `DeviceHandover` asked for them; a handoff is published at
    /// once, and a release timer starts at once (only its expiry waits its turn).
    private func perform(_ actions: [DeviceHandover.Action]) {
        for action in actions {
            switch action {
            case .hold, .release:
                handoverWork.enqueue { [self] in await carryOut(action) }
            case .publishHandoff(let device, let handoff):
                publishHandoff(device, handoff)
            case .startReleaseTimer(let device, let epoch):
                startReleaseTimer(device, epoch: epoch)
            }
        }
    }

    /// On `handoverWork`: one action, and those it leads to, in turn (a release's handoff; a timer's hold).
    private func carryOut(_ action: DeviceHandover.Action) async {
        switch action {
        case .hold(let device, let storage):
            await manager.withLock({ $0 })?.hold(id: device, storage: storage)
            publishPresence(device)
        case .release(let device, let epoch):
            // Half the new owner's wait for the handoff goes to a page being committed; the rest to publishing.
            let entries = await manager.withLock({ $0 })?.release(id: device, sharingCredentials: sharesCredentials,
                                                                  commitWait: settings.releaseTimeout / 2) ?? [:]
            let released = time.unixMilliseconds
            for next in state.withLock({ $0.handover.released(device: device, storage: entries, releasedMilliseconds: released) }) {
                await carryOut(next)
            }
            logger.info("site: device released", metadata: ["device": "\(device)", "epoch": "\(epoch)"])
        case .publishHandoff(let device, let handoff):
            publishHandoff(device, handoff)
        case .startReleaseTimer(let device, let epoch):
            startReleaseTimer(device, epoch: epoch)
        }
    }

    private func publishHandoff(_ device: String, _ handoff: SiteMessages.Handoff) {
        sink.publish(OutgoingMessage(topic: topics.handoff(device), payload: SiteMessages.encode(handoff),
                                     qos: .atLeastOnce, retain: true, properties: MQTTProperties(contentType: "application/json")))
    }

    /// Sleeps `releaseTimeout`, then queues the expiry behind the holds and releases asked for meanwhile;
    /// `DeviceHandover` ignores it if the epoch is no longer the one awaited. A newer timer of the device replaces it.
    private func startReleaseTimer(_ device: String, epoch: UInt64) {
        releaseTimers.withLock { timers in
            guard timers != nil else { return }
            timers?[device]?.cancel()
            // Unstructured: a per-device release timer, cancelled on a new hold; its expiry waits its turn in `handoverWork`.
            timers?[device] = Task { [self] in
                do { try await time.sleep(for: settings.releaseTimeout) } catch { return }
                handoverWork.enqueue { [self] in
                    for next in state.withLock({ $0.handover.timedOut(device: device, epoch: epoch) }) { await carryOut(next) }
                }
            }
        }
    }

    /// `<base>/<device>/presence`: where the device is now, for people and for Home Assistant.
    private func publishPresence(_ device: String) {
        let rssi = state.withLock { $0.lastLevel[device] }
        let presence: [String: DeviceValue] = [
            "gateway": .text(gatewayID), "room": room.map(DeviceValue.text) ?? .null,
            "rssi": rssi.map { .integer(Int64($0)) } ?? .null, "since": .integer(time.unixMilliseconds),
        ]
        sink.publish(OutgoingMessage(topic: layout.device(device) + "/presence", payload: JSONWriter.encode(.object(presence)),
                                     qos: .atLeastOnce, retain: true, properties: MQTTProperties(contentType: "application/json")))
    }
}
