import EventLoop
import MQTT
import Synchronization
import Wearables

/// Home Assistant as a gateway extension (docs/home-assistant.md): discovery of the bridge and every wearable, calm
/// entity values from samples, fitness summaries, and everything again when Home Assistant says `online`.
final class HomeAssistantExtension: GatewayExtension {
    let publisher: HomeAssistantPublisher
    private let statusTopic: String
    private let sink: any MessageSink
    private let time: TimeSource
    /// The core it extends, for the device list and the devices' states (weak: the core owns its extensions).
    private let core = Mutex<WeakGatewayCore>(WeakGatewayCore())

    init(publisher: HomeAssistantPublisher, statusTopic: String, sink: any MessageSink, time: TimeSource) {
        self.publisher = publisher
        self.time = time
        pending = Mutex((false, time.now, time.now))
        self.statusTopic = statusTopic
        self.sink = sink
    }

    func bind(_ core: GatewayCore) { self.core.withLock { $0.value = core } }
    private var gateway: GatewayCore? { core.withLock { $0.value } }

    var subscriptions: [String] { [statusTopic] }
    var hearsDeviceEvents: Bool { true }

    /// Home Assistant's `online`: a republish, debounced, and never a request.
    func take(_ message: IncomingMessage) -> Bool {
        guard publisher.isHomeAssistantOnline(message, statusTopic: statusTopic) else { return false }
        scheduleRepublish()
        return true
    }

    func deviceEvent(_ event: WearableEvent, of device: String, at now: ContinuousClock.Instant, unixMilliseconds: Int64) {
        switch event {
        case .sample(let sample):
            let (messages, newEntity) = publisher.sample(sample, device: device, at: now)
            for message in messages { sink.publish(message) }
            if newEntity { gateway?.publishDeviceList() }
        case .record(let record):
            publisher.record(record, device: device, unixMilliseconds: unixMilliseconds)
        case .progress("sync", let progress) where progress.percent == 100 && ["idle", "completed"].contains(progress.state):
            publisher.syncFinished(device: device, unixMilliseconds: unixMilliseconds)
        default:
            break
        }
    }

    func deviceListPublished(_ publication: DeviceListPublication) {
        var discovered = publication.discovered
        for index in discovered.indices { discovered[index].sensors.formUnion(publisher.fedEntities(of: discovered[index].id)) }
        for message in publisher.devices(discovered, force: publication.force, site: publication.siteView) { sink.publish(message) }
    }

    func republish() {
        if gateway?.publishesBridgeTopics ?? false { sink.publish(publisher.bridge()) }
        gateway?.refreshFirmwareOffers()
    }

    func tookBridgeTopics() { sink.publish(publisher.bridge()) }

    func due(at now: ContinuousClock.Instant, unixMilliseconds: Int64) {
        for message in publisher.due(at: now, unixMilliseconds: unixMilliseconds) { sink.publish(message) }
    }

    // MARK: Home Assistant's `online`

    /// The republish for Home Assistant's `online`, debounced: it runs once the `online`s have been quiet for half a
    /// second (after at least a random 0.5–2.5 s, so a fleet of gateways does not answer at once, and at most 5 s
    /// after the first), so a burst of them (a restart loop, a client replaying the status topic) gives one
    /// republish, and none holds a request slot while it waits. An `online` during the republish starts another.
    private let pending: Mutex<(waiting: Bool, due: ContinuousClock.Instant, latest: ContinuousClock.Instant)>

    private func scheduleRepublish() {
        let now = time.now
        let start = pending.withLock { state -> Bool in
            if state.waiting {
                state.due = min(state.latest, max(state.due, now + .milliseconds(500)))
                return false
            }
            state = (true, now + .milliseconds(Int.random(in: 500...2500)), now + .seconds(5))
            return true
        }
        guard start else { return }
        // Unstructured: a debounce timer started by synchronous callers; it ends when nothing is due (or self is gone).
        Task { [weak self] in
            while let self {
                let wait = self.pending.withLock { state -> Duration? in
                    let left = state.due - self.time.now
                    if left > .zero { return left }
                    state.waiting = false
                    return nil
                }
                guard let wait else { break }
                try? await self.time.sleep(for: wait)
            }
            await self?.cameOnline()
        }
    }

    /// Home Assistant said `online` on its status topic (it started, or its MQTT integration reloaded): discovery and
    /// every state again, so no entity stays `unknown`.
    func cameOnline() async {
        guard let gateway else { return }
        if gateway.publishesBridgeTopics { sink.publish(publisher.bridge()) }
        await gateway.republishForHomeAssistant()
        for message in publisher.lastValues() { sink.publish(message) }
    }
}
