import MQTT
import Wearables

/// A feature beside the gateway's core — Home Assistant, a site of gateways, metrics — seen by the core only through
/// these hooks, in the spirit of zigbee2mqtt's extensions: `GatewayCore` calls every extension's hook in turn instead
/// of branching on each feature. Hooks are synchronous and called in the order messages and outputs arrive (one that
/// must wait starts its own work); each has a default that does nothing, so an extension implements only its own.
///
/// It does not own a transport: what an extension publishes goes through the core's sink.
public protocol GatewayExtension: AnyObject, Sendable {
    /// Topics it needs besides the contract's requests (Home Assistant's status, a site's records).
    var subscriptions: [String] { get }
    /// The device manager exists (the Bluetooth stack is reachable), before it starts any session.
    func managerAttached(_ manager: DeviceManager) async
    /// After every broker connection, before the core republishes: its own records first (a site's gateway record).
    func brokerConnected()
    /// Whether an incoming message is its own (a site record, Home Assistant's `online`), taken before it could be a
    /// request. Called in arrival order.
    func take(_ message: IncomingMessage) -> Bool
    /// Whether this gateway answers a request on `incoming` (in a site, only its owner or the referee does).
    func answers(_ incoming: IncomingTopic) -> Bool
    /// Whether `publishesState` can ever say no, and `deviceEvent` wants samples: the core asks only those that do on
    /// the sample path (read once, at start).
    var gatesDeviceState: Bool { get }
    var hearsDeviceEvents: Bool { get }
    /// Whether this gateway writes `device`'s state, availability and samples now.
    func publishesState(of device: String, at now: ContinuousClock.Instant) -> Bool
    /// Whether this gateway publishes the bridge's own topics (`bridge/info`, `bridge/devices`, `bridge/health`).
    var publishesBridgeTopics: Bool { get }
    /// A device's event, after the contract's messages for it were published (when this gateway publishes them).
    func deviceEvent(_ event: WearableEvent, of device: String, at now: ContinuousClock.Instant, unixMilliseconds: Int64)
    /// The device list about to be published: an extension may narrow or replace it (a site's list is the referee's).
    func narrowDeviceList(_ publication: inout DeviceListPublication)
    /// The device list was published: an extension publishes its own view of it (Home Assistant's discovery).
    func deviceListPublished(_ publication: DeviceListPublication)
    /// The broker came back, or Home Assistant asked for everything again: what it publishes beside the core's.
    func republish()
    /// A request was answered (`ok`: its response said so), after `duration`.
    func answered(_ request: ContractRequest, ok: Bool, duration: Duration)
    /// Timed work due at `now` (calm entity values).
    func due(at now: ContinuousClock.Instant, unixMilliseconds: Int64)
    /// The gateway stops: work still queued is dropped before the devices are let go.
    func stopping()
    /// The messages that say this gateway left, beside its devices' offline states.
    func leaving() -> [OutgoingMessage]
    /// Whether the bridge stays online when this gateway stops (other gateways of its site carry it on).
    var keepsBridgeOnline: Bool { get }
    /// This gateway just took the bridge's topics over (a site's new referee): what it publishes for the bridge.
    func tookBridgeTopics()
}

extension GatewayExtension {
    public var subscriptions: [String] { [] }
    public var gatesDeviceState: Bool { false }
    public var hearsDeviceEvents: Bool { false }
    public func managerAttached(_ manager: DeviceManager) async {}
    public func brokerConnected() {}
    public func take(_ message: IncomingMessage) -> Bool { false }
    public func answers(_ incoming: IncomingTopic) -> Bool { true }
    public func publishesState(of device: String, at now: ContinuousClock.Instant) -> Bool { true }
    public var publishesBridgeTopics: Bool { true }
    public func deviceEvent(_ event: WearableEvent, of device: String, at now: ContinuousClock.Instant, unixMilliseconds: Int64) {}
    public func narrowDeviceList(_ publication: inout DeviceListPublication) {}
    public func deviceListPublished(_ publication: DeviceListPublication) {}
    public func republish() {}
    public func answered(_ request: ContractRequest, ok: Bool, duration: Duration) {}
    public func due(at now: ContinuousClock.Instant, unixMilliseconds: Int64) {}
    public func stopping() {}
    public func leaving() -> [OutgoingMessage] { [] }
    public var keepsBridgeOnline: Bool { false }
    public func tookBridgeTopics() {}
}

/// The device list on its way out: `bridge/devices`' entries and Home Assistant's wearables, which extensions see
/// in order (the site narrows them to what this gateway holds before Home Assistant announces them).
public struct DeviceListPublication: Sendable {
    public var entries: [BridgeDeviceEntry]
    public var discovered: [DiscoveredWearable]
    /// Republish discovery whatever it was (a broker reconnect, Home Assistant's `online`).
    public var force: Bool
    /// In a site: the site's managed addresses and whether this gateway is its referee (for Home Assistant).
    public var siteView: HomeAssistantPublisher.SiteView?
}
