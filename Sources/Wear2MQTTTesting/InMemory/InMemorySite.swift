import Gateway
import MQTT
import Synchronization
import Wearables

/// Several in-memory gateways (`GatewayHarness`, each with a central of its own) on one in-memory broker: every
/// message any of them publishes goes, in one order for all, to every gateway still connected, with retained
/// messages kept for gateways that join later and each gateway's will published when it is killed — the parts of a
/// broker a site of gateways relies on (docs/roaming.md). Each gateway's own `RecordingSink` still records what it
/// published.
///
/// It does not model QoS, message expiry, or a network between broker and gateways: delivery is immediate.
public final class InMemorySite: Sendable, Stoppable {
    public let gateways: [String: GatewayHarness]
    private let hub = Mutex(Hub())
    /// Each gateway's site work (its reports and, as referee, its decisions), as `GatewayService` runs it.
    private let ticks = Mutex<[String: Task<Void, Never>]>([:])

    struct Hub: Sendable {
        var queue: [(from: String, message: OutgoingMessage)] = []
        var retained: [String: OutgoingMessage] = [:]
        var log: [(from: String, message: OutgoingMessage)] = []
        var connected: Set<String> = []
        var draining = false
    }

    /// `configuration`: YAML shared by every gateway (devices, `roaming:` settings); each gets `gateway.id` (and
    /// `gateway.room`, the same name) from `ids`; `mqtt` adds lines to each one's `mqtt:` section.
    public init(ids: [String], configuration: String, mqtt: [String] = []) throws {
        var gateways: [String: GatewayHarness] = [:]
        for id in ids {
            gateways[id] = try GatewayHarness(configuration: configuration, gatewayID: id, room: id, mqtt: mqtt)
        }
        self.gateways = gateways
        for (id, gateway) in gateways {
            gateway.sink.forwardPublications { [weak self] message in self?.publish(message, from: id) }
        }
    }

    /// Connects `id` to the broker (it receives every retained message first, as a new subscription does) and starts
    /// it with its Bluetooth stack.
    public func start(_ id: String) async {
        guard let gateway = gateways[id] else { return }
        let retained = hub.withLock { hub in
            hub.connected.insert(id)
            return hub.retained.keys.sorted().compactMap { hub.retained[$0] }
        }
        for message in retained { deliver(message, to: gateway) }
        gateway.core.site?.connected()
        await gateway.start()
        guard let site = gateway.core.site else { return }
        ticks.withLock { ticks in
            ticks[id] = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: site.settings.reportInterval)
                    await site.tick()
                }
            }
        }
    }

    /// The gateway's process dies: it is cut off the broker, which publishes its will.
    public func kill(_ id: String) {
        hub.withLock { _ = $0.connected.remove(id) }
        ticks.withLock { $0.removeValue(forKey: id)?.cancel() }
        guard let gateway = gateways[id] else { return }
        publish(SiteCoordinator.will(gatewayID: id, layout: gateway.core.topics), from: "broker", force: true)
    }

    /// Publishes as a client would (a user's request), under the base topic's full name.
    public func publish(_ message: OutgoingMessage) { publish(message, from: "client", force: true) }

    /// Every message published on `topic`, with its publisher, in the broker's order.
    public func messages(on topic: String) -> [(from: String, message: OutgoingMessage)] {
        hub.withLock { $0.log.filter { $0.message.topic == topic } }
    }

    public func retained(_ topic: String) -> OutgoingMessage? { hub.withLock { $0.retained[topic] } }

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

    /// What a subscription of the gateway would receive: the site's records and the contract's requests.
    private func deliver(_ message: OutgoingMessage, to gateway: GatewayHarness) {
        let core = gateway.core
        guard let site = core.site else { return }
        let isRequest: Bool
        if case .notOurs = core.topics.classify(message.topic) { isRequest = false } else { isRequest = true }
        guard isRequest || site.topics.classify(message.topic) != nil else { return }
        let incoming = IncomingMessage(topic: message.topic, payload: message.payload, qos: message.qos, retain: message.retain,
                                       properties: message.properties)
        guard core.admit(incoming), isRequest else { return }
        Task { await core.handle(incoming) }
    }

    public func stop() async {
        ticks.withLock { ticks in
            for task in ticks.values { task.cancel() }
            ticks = [:]
        }
        for gateway in gateways.values { await gateway.stop() }
    }
}
