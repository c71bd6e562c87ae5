import MQTT
import Wearables

/// The contract's side of the devices, as a value: what the sessions report (`ManagerOutput`) in, the messages to
/// publish out. It owns each device's retained state document, the sample batcher, per-device options, the
/// heart-rate variability of every beat source and the message counts of `bridge/health`; it does no I/O and reads
/// no clock (the caller passes the time), so every rule of the contract about device output is unit-tested without a
/// broker.
///
/// It does not build `bridge/devices` (that needs the device manager's list): it asks for it with
/// `.publishDeviceList`.
public struct DeviceOutputMapper: Sendable {
    public enum Action: Sendable, Equatable {
        case publish(OutgoingMessage)
        /// A record that must reach the broker: spooled, in order.
        case publishDurable(OutgoingMessage)
        /// `bridge/devices` changed; the caller builds it from the device list.
        case publishDeviceList
    }

    public let messages: ContractMessages
    public private(set) var documents: [String: DeviceStateDocument] = [:]
    /// Moves on with every change of any document, so the caller knows when the kept copy is behind.
    public private(set) var documentsRevision: UInt64 = 0
    private var batcher = SampleBatcher()
    private var variability: HeartRateVariabilityMonitor
    /// What the mapper keeps of each device, in one entry: a sample looks its device up once.
    private var devices: [String: DeviceRecord] = [:]
    /// The JSON of unbatched samples, one buffer reused from sample to sample (`ContractMessages.sample(…writer:)`).
    private var sampleWriter = JSONWriter(capacity: 256)

    private struct DeviceRecord {
        /// Nil until the device manager hands the device's options over (`setOptions`).
        var options: DeviceOptions?
        var sensors: [SensorKind: SensorRecord] = [:]
        /// Messages since `takeMessageCounts`, for `bridge/health`.
        var messageCount = 0

        /// Where a sample goes and how.
        struct SampleRoute {
            var firstOfItsKind: Bool
            /// The sensor's topic, built the first time: a topic string per sample would be an allocation.
            var topic: String
            var qos: QoS
            var retain: Bool
            var batchMilliseconds: Int
        }

        /// Counts a sample of `kind` (and, when it is not batched, its message).
        mutating func count(_ kind: SensorKind, device id: String, topics: TopicLayout) -> SampleRoute {
            var index = sensors.index(forKey: kind)
            let first = index == nil
            if first {
                sensors[kind] = SensorRecord(topic: topics.sensor(id, kind))
                index = sensors.index(forKey: kind)
            }
            sensors.values[index!].samples &+= 1
            let batchMilliseconds = options?.batchMilliseconds ?? 0
            if batchMilliseconds <= 0 { messageCount += 1 }
            let delivery = DeviceOutputMapper.sampleDelivery(options)
            return SampleRoute(firstOfItsKind: first, topic: sensors.values[index!].topic, qos: delivery.qos,
                               retain: delivery.retain, batchMilliseconds: batchMilliseconds)
        }
    }

    private struct SensorRecord {
        /// Samples since the gateway started, for `wear2mqtt_samples_published_total`: counted here, where each
        /// sample passes anyway, and read only when metrics are scraped.
        var samples: UInt64 = 0
        /// `<base>/<id>/sensor/<name>`.
        var topic: String
    }

    public init(messages: ContractMessages, heartRateVariability: Configuration.HeartRateVariabilitySection = .init()) {
        self.messages = messages
        variability = HeartRateVariabilityMonitor(settings: heartRateVariability)
    }

    // MARK: Device output

    /// What one report from the device side becomes. `now` orders sample batches; `unixMilliseconds` is the wall
    /// time for `last_seen`.
    public mutating func map(_ output: ManagerOutput, now: ContinuousClock.Instant, unixMilliseconds: Int64) -> Actions {
        switch output {
        case .device(let id, .event(let event)):
            return map(event, from: id, now: now, unixMilliseconds: unixMilliseconds)
        case .device(let id, .connection(let connection)):
            var actions = Actions()
            let online = connection == .connected
            if let document = update(id, { $0.setConnection(connection.rawValue) }) {
                actions.append(.publish(messages.state(id, document)))
            }
            if connection == .connected || connection == .disconnected {
                actions.append(.publish(messages.availability(id, online: document(id).isAvailable)))
                actions.append(.publish(messages.bridgeEvent(BridgeEvent(online ? .deviceConnected : .deviceDisconnected,
                                                                         data: ["id": .text(id)]))))
                if !online {
                    actions += batcher.flush(device: id).map { .publish(sampleMessage($0)) }
                    variability.disconnected(id)
                }
                actions.append(.publishDeviceList)
            }
            return actions
        case .device(let id, .link(let link)):
            // A link on demand reached, let go or not reached: available or not without a change of connection.
            guard let document = update(id, { $0.setLink(link) }) else { return [] }
            return [.publish(messages.state(id, document)), .publish(messages.availability(id, online: document.isAvailable))]
        case .deviceListChanged:
            return [.publishDeviceList]
        case .deviceRetired(let id):
            documents[id] = nil
            documentsRevision &+= 1
            // Its messages since the last health report still count there.
            let messageCount = devices[id]?.messageCount ?? 0
            devices[id] = messageCount > 0 ? DeviceRecord(messageCount: messageCount) : nil
            _ = batcher.setWindow(.zero, forDevice: id)
            variability.forget(id)
            return Actions(messages.removal(id).map(Action.publish))
        case .bridgeEvent(let type, let data):
            guard let kind = BridgeEvent.Kind(rawValue: type) else { return [] }
            return [.publish(messages.bridgeEvent(BridgeEvent(kind, data: data)))]
        }
    }

    private mutating func map(_ event: WearableEvent, from id: String, now: ContinuousClock.Instant,
                              unixMilliseconds: Int64) -> Actions {
        switch event {
        case .sample(let sample):
            variability.add(sample, device: id, at: now)
            var actions = Actions()
            let firstOfItsKind = mapSample(sample, of: id, into: &actions, now: now)
            // A sensor seen for the first time is a new capability in bridge/devices (and Home Assistant).
            if firstOfItsKind { actions.append(.publishDeviceList) }
            return actions
        case .gesture(let name, let timestamp):
            count(id)
            return [.publish(messages.gesture(id, name: name, timestamp: timestamp))]
        case .event(let name, let timestamp, let details):
            count(id)
            return [.publish(messages.event(id, name: name, timestamp: timestamp, details: details))]
        case .record(let record):
            return [.publishDurable(messages.record(id, record))]
        case .state, .progress:
            var actions = Actions()
            if let document = update(id, { document in
                let changed = document.apply(event)
                return document.setLastSeen(unixMilliseconds) || changed
            }) {
                count(id)
                actions.append(.publish(messages.state(id, document)))
            }
            // bridge/devices shows the vendor and model the device reports, Home Assistant's device its identity
            // and its capabilities.
            if case .state(let patch) = event, !Self.identityKeys.isDisjoint(with: patch.keys) {
                actions.append(.publishDeviceList)
            }
            return actions
        }
    }

    /// One sample of a device: its message (or its batch's, when the device batches and a window closed) into
    /// `actions`, counted. Answers whether it is the first sample of its sensor. The hot path: the device's record
    /// is looked up by id once and changed in place through its index.
    private mutating func mapSample(_ sample: SensorSample, of id: String, into actions: inout Actions,
                                    now: ContinuousClock.Instant) -> Bool {
        let index = devices.index(forKey: id) ?? addRecord(for: id)
        // One in-place access: reading `devices.values[index].options` copied the whole record (retaining all it holds).
        let route = devices.values[index].count(sample.sensor, device: id, topics: messages.topics)
        guard route.batchMilliseconds > 0 else {
            // Unbatched (the default): straight to a message on the kept topic, no publication in between.
            actions.append(.publish(messages.sample(sample, topic: route.topic, qos: route.qos, retain: route.retain,
                                                    writer: &sampleWriter)))
            return route.firstOfItsKind
        }
        let publications = batcher.add(sample, device: id, at: now)
        devices.values[index].messageCount += publications.count
        for publication in publications {
            actions.append(.publish(messages.samples(publication, qos: route.qos, retain: route.retain)))
        }
        return route.firstOfItsKind
    }

    private mutating func addRecord(for id: String) -> [String: DeviceRecord].Index {
        devices[id] = DeviceRecord()
        return devices.index(forKey: id)!
    }

    /// State keys that say who a device is or what it can do.
    static let identityKeys: Set<String> = ["manufacturer", "model", "serial", "hardware", "firmware", "capabilities"]

    // MARK: Batches and options

    /// Batches whose window closed by `now`.
    public mutating func dueSamples(at now: ContinuousClock.Instant) -> [OutgoingMessage] {
        batcher.due(at: now).map(sampleMessage)
    }

    /// When the next batch window closes, if one is open.
    public var nextBatchDeadline: ContinuousClock.Instant? { batcher.nextDeadline }

    /// At each `hrv.interval_s` tick, a `sensor/hrv` sample for every device with beats in its window; the caller
    /// maps each like any sample of its device (`map(.device(id, .event(.sample(…))))`), so batching, QoS, counts
    /// and Home Assistant treat it as one.
    public mutating func dueVariability(at now: ContinuousClock.Instant, unixMilliseconds: Int64) -> [(device: String, sample: SensorSample)] {
        variability.due(at: now, unixMilliseconds: unixMilliseconds)
    }

    /// The next `hrv.interval_s` tick, once a device has sent beats.
    public var nextVariabilityDeadline: ContinuousClock.Instant? { variability.nextDeadline }

    /// Whether any device batches its samples (`batch_ms` > 0): then a batch may open at any moment.
    public var anyDeviceBatches: Bool { devices.values.contains { ($0.options?.batchMilliseconds ?? 0) > 0 } }

    /// Takes a device's options (first sight of the device, or `device/options`); answers the samples a shorter
    /// window flushed. The batcher's window of a device always follows its `batch_ms` here.
    public mutating func setOptions(_ deviceOptions: DeviceOptions, for id: String) -> [OutgoingMessage] {
        devices[id, default: DeviceRecord()].options = deviceOptions
        return batcher.setWindow(.milliseconds(deviceOptions.batchMilliseconds), forDevice: id).map(sampleMessage)
    }

    public func hasOptions(for id: String) -> Bool { devices[id]?.options != nil }

    private func sampleMessage(_ publication: SamplePublication) -> OutgoingMessage {
        let delivery = Self.sampleDelivery(devices[publication.device]?.options)
        return messages.samples(publication, qos: delivery.qos, retain: delivery.retain)
    }

    /// The QoS and retain flag a device's options give its samples.
    fileprivate static func sampleDelivery(_ options: DeviceOptions?) -> (qos: QoS, retain: Bool) {
        let deviceOptions = options ?? DeviceOptions()
        return (QoS(rawValue: deviceOptions.sampleQoS) ?? .atMostOnce, deviceOptions.retainSamples)
    }

    // MARK: What other messages need

    public func document(_ id: String) -> DeviceStateDocument { documents[id] ?? DeviceStateDocument() }

    public func sensors(of id: String) -> Set<String> { Set(devices[id]?.sensors.keys.map(\.rawValue) ?? []) }

    /// Samples by sensor since the gateway started, for `wear2mqtt_samples_published_total`.
    public func sampleCounts(of id: String) -> [SensorKind: UInt64] { devices[id]?.sensors.mapValues(\.samples) ?? [:] }

    /// Each device's state and availability, as republished after every broker (re)connect; only those of
    /// `managed` when given (kept documents wait until the device list says which devices are still managed).
    public func retainedDeviceMessages(of managed: Set<String>? = nil) -> [OutgoingMessage] {
        documents.filter { managed?.contains($0.key) ?? true }.sorted { $0.key < $1.key }.flatMap { id, document in
            [messages.state(id, document),
             messages.availability(id, online: document.isAvailable)]
        }
    }

    /// Every known device offline (only those of `devices` when given), for a graceful shutdown.
    public func offlineMessages(of devices: Set<String>? = nil) -> [OutgoingMessage] {
        documents.keys.filter { devices?.contains($0) ?? true }.sorted().map { messages.availability($0, online: false) }
    }

    /// The messages each device caused since the last call, for `bridge/health`; the count starts again.
    public mutating func takeMessageCounts() -> [String: Int] {
        var counts: [String: Int] = [:]
        // By index: changing entries while iterating the dictionary itself would copy all of it.
        for index in devices.indices where devices.values[index].messageCount > 0 {
            counts[devices.keys[index]] = devices.values[index].messageCount
            devices.values[index].messageCount = 0
        }
        return counts
    }

    /// A message that is not a sample but comes from a device (a command's own output) counts for its rate.
    public mutating func count(_ id: String, _ messages: Int = 1) {
        devices[id, default: DeviceRecord()].messageCount += messages
    }

    private mutating func update(_ id: String, _ change: (inout DeviceStateDocument) -> Bool) -> DeviceStateDocument? {
        var document = self.document(id)
        let changed = change(&document)
        documents[id] = document
        if changed { documentsRevision &+= 1 }
        return changed ? document : nil
    }

    // MARK: Kept across restarts

    /// The documents kept from the last run (`DeviceStateArchive`), taken before any device reports, so the first
    /// report merges into the whole document instead of starting a new one.
    public mutating func restore(_ kept: [String: DeviceStateDocument]) {
        for (id, document) in kept where documents[id] == nil { documents[id] = document }
    }
}
