import FoundationEssentials
import Logging
import MQTT
import Synchronization
import Wearables

/// What the gateway keeps for Home Assistant between messages: the discovery documents last published (so a device
/// is announced again only when what Home Assistant would show changed), which device id each belongs to (so
/// `device/remove` and renames can delete it), the calm entity feed and each entity's last value (republished when
/// Home Assistant comes back, so nothing shows `unknown` after its restart).
public final class HomeAssistantPublisher: Sendable {
    public let discovery: HomeAssistantDiscovery
    private let logger = Logger(label: "homeassistant")
    private struct State {
        var feed: EntityStateFeed
        /// Each device's last document (without removals) and its components' platforms, by object id.
        var published: [String: (payload: [UInt8], platforms: [String: String])] = [:]
        var lastValues: [String: [String: Double]] = [:]
        var summaries: FitnessSummaries
        var summariesPublished: ContinuousClock.Instant?
        /// In a site: the object ids of every device the site managed at the last call.
        var siteManaged: Set<String> = []
    }

    /// In a site of gateways, what `devices` needs besides this gateway's own: which devices the site manages (a
    /// device that went to another gateway is not removed from Home Assistant, only no longer announced from here),
    /// and whether this gateway is the referee (which removes the devices the site removed, whoever held them).
    public struct SiteView: Sendable {
        public var managedAddresses: [String]
        public var referee: Bool

        public init(managedAddresses: [String], referee: Bool) {
            self.managedAddresses = managedAddresses
            self.referee = referee
        }
    }
    private let state: Mutex<State>

    /// `stateDirectory` keeps the fitness summaries across restarts; nil keeps them in memory.
    public init(_ section: Configuration.HomeAssistantSection, topics: TopicLayout, gatewayID: String, stateDirectory: String?,
                timeZone: TimeZone = .current, roaming: Bool = false, radios: Bool = false) {
        discovery = HomeAssistantDiscovery(prefix: section.discoveryPrefix, topics: topics, gatewayID: gatewayID,
                                           expireAfterSeconds: section.expireAfterSeconds, roaming: roaming, radios: radios)
        state = Mutex(State(feed: EntityStateFeed(interval: .seconds(section.stateIntervalSeconds)),
                            summaries: FitnessSummaries(stateDirectory: stateDirectory, timeZone: timeZone)))
    }

    /// The bridge's document, always (it is cheap and goes out once per broker connection).
    public func bridge() -> OutgoingMessage { discovery.bridge() }

    /// Brings Home Assistant in line with the gateway's devices: the document of each device whose discovery
    /// changed (all of them with `force`, after a broker or Home Assistant restart), and an empty one for each
    /// device published before and gone now. A renamed device keeps its object id (its address), so Home Assistant
    /// updates it in place and keeps its entities' history.
    ///
    /// In a site (`site`), `current` holds only the devices this gateway holds: a device another gateway took keeps
    /// its (site-wide) document, which its new holder republishes.
    public func devices(_ current: [DiscoveredWearable], force: Bool = false, site: SiteView? = nil) -> [OutgoingMessage] {
        let documents = current.map { (discovery.objectID(address: $0.address), $0, discovery.wearableDocument($0)) }
        let siteManaged = site.map { Set($0.managedAddresses.map(discovery.objectID)) }
        return state.withLock { state -> [OutgoingMessage] in
            var messages: [OutgoingMessage] = []
            let kept = Set(documents.map(\.0))
            var removed: Set<String> = []
            for objectID in state.published.keys.sorted() where !kept.contains(objectID) {
                state.published[objectID] = nil
                if siteManaged?.contains(objectID) != true { removed.insert(objectID) }
            }
            if let site, let siteManaged {
                if site.referee { removed.formUnion(state.siteManaged.subtracting(siteManaged)) }
                state.siteManaged = siteManaged
            }
            messages += removed.sorted().map(discovery.removal)
            let ids = Set(documents.map(\.1.id))
            for id in state.lastValues.keys where !ids.contains(id) {
                state.feed.forget(id)
                state.lastValues[id] = nil
            }
            for id in state.summaries.devices where !ids.contains(id) { state.summaries.forget(id) }
            for (objectID, wearable, document) in documents where force || state.published[objectID]?.payload != document.message.payload {
                let gone = (state.published[objectID]?.platforms ?? [:]).filter { document.platforms[$0.key] == nil }
                state.published[objectID] = (document.message.payload, document.platforms)
                messages.append(gone.isEmpty ? document.message : discovery.wearableDocument(wearable, removed: gone).message)
            }
            return messages
        }
    }

    /// A sample of a device: the entity values to publish now, if any, and whether one of them is the first of its
    /// entity (a strap's first RR interval): then the device's discovery must grow.
    public func sample(_ sample: SensorSample, device: String, at now: ContinuousClock.Instant) -> (messages: [OutgoingMessage], newEntity: Bool) {
        let (updates, newEntity) = state.withLock { state -> ([EntityStateFeed.Update], Bool) in
            let updates = state.feed.add(sample, device: device, at: now)
            var newEntity = false
            for update in updates {
                newEntity = state.lastValues[device, default: [:]].updateValue(update.value, forKey: update.key) == nil || newEntity
            }
            return (updates, newEntity)
        }
        return (updates.map(message), newEntity)
    }

    /// The entities a device's samples have fed so far.
    public func fedEntities(of device: String) -> Set<String> {
        state.withLock { $0.lastValues[device].map { Set($0.keys) } ?? [] }
    }

    /// A durable record of a device, for its fitness summary (published by `due`).
    public func record(_ record: FitnessRecord, device: String, unixMilliseconds: Int64) {
        state.withLock { $0.summaries.record(record, device: device, now: unixMilliseconds) }
    }

    /// A device's sync finished, for its "last sync" entity.
    public func syncFinished(device: String, unixMilliseconds: Int64) {
        state.withLock { $0.summaries.syncFinished(device: device, now: unixMilliseconds) }
    }

    /// Entity values whose interval closed by `now`, for the periodic timer; the fitness summaries that changed
    /// (at most once per interval: a sync of thousands of records moves them thousands of times), saved as well.
    public func due(at now: ContinuousClock.Instant, unixMilliseconds: Int64) -> [OutgoingMessage] {
        let (updates, saveError) = state.withLock { state -> ([EntityStateFeed.Update], (any Error)?) in
            var updates = state.feed.due(at: now)
            for update in updates { state.lastValues[update.device, default: [:]][update.key] = update.value }
            var saveError: (any Error)?
            if state.summariesPublished.map({ now - $0 >= state.feed.interval }) ?? true {
                state.summariesPublished = now
                updates += state.summaries.takeUpdates(now: unixMilliseconds)
                do { try state.summaries.save() } catch { saveError = error }
            }
            return (updates, saveError)
        }
        if let saveError { logger.warning("the fitness summaries could not be saved", metadata: ["error": "\(saveError)"]) }
        return updates.map(message)
    }

    /// Every entity's last value, for Home Assistant coming back online.
    public func lastValues() -> [OutgoingMessage] {
        state.withLock { state in
            state.lastValues.sorted { $0.key < $1.key }.flatMap { device, values in
                values.sorted { $0.key < $1.key }.map { EntityStateFeed.Update(device: device, key: $0.key, value: $0.value) }
            } + state.summaries.all()
        }.map(message)
    }

    /// Whether `message` is Home Assistant announcing it started.
    public func isHomeAssistantOnline(_ message: IncomingMessage, statusTopic: String) -> Bool {
        message.topic == statusTopic && String(decoding: message.payload, as: UTF8.self) == "online"
    }

    private func message(_ update: EntityStateFeed.Update) -> OutgoingMessage {
        var writer = JSONWriter(capacity: 16)
        if update.value.isNaN {
            // Home Assistant's MQTT sensor takes `None` as "no value": the entity shows unknown.
            return OutgoingMessage(topic: discovery.entityTopic(update.device, update.key), payload: Array("None".utf8))
        } else if update.value.rounded() == update.value, abs(update.value) < 1e15 {
            writer.integer(Int64(update.value))
        } else {
            writer.number(update.value)
        }
        return OutgoingMessage(topic: discovery.entityTopic(update.device, update.key), payload: writer.bytes)
    }
}
