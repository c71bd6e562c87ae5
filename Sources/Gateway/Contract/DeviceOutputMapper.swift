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
    private var options: [String: DeviceOptions] = [:]
    /// `<base>/<id>/sensor/<name>` by device and sensor, built once: a topic string per sample is an allocation.
    private var sensorTopics: [String: [SensorKind: String]] = [:]
    private var sensorsSeen: [String: Set<String>] = [:]
    /// The JSON of unbatched samples, one buffer reused from sample to sample (`ContractMessages.sample(…writer:)`).
    private var sampleWriter = JSONWriter(capacity: 256)
    private var messageCounts: [String: Int] = [:]
    /// Samples by device and sensor since the gateway started, for `wear2mqtt_samples_published_total`: counted
    /// here, where each sample passes anyway, and read only when metrics are scraped.
    public private(set) var sampleCounts: [String: [SensorKind: UInt64]] = [:]

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
            sensorTopics[id] = nil
            _ = batcher.flush(device: id)
            options[id] = nil
            sensorsSeen[id] = nil
            sampleCounts[id] = nil
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
            // The hot path: one batcher step, the device's options, its message count.
            let firstOfItsKind = sensorsSeen[id, default: []].insert(sample.sensor.rawValue).inserted
            variability.add(sample, device: id, at: now)
            sampleCounts[id, default: [:]][sample.sensor, default: 0] &+= 1
            if batcher.window(forDevice: id) == .zero {
                // Unbatched (the default): straight to a message on the kept topic, no publication in between.
                count(id, 1)
                let delivery = sampleDelivery(id)
                let message = messages.sample(sample, topic: sensorTopic(id, sample.sensor), qos: delivery.qos,
                                              retain: delivery.retain, writer: &sampleWriter)
                // Appended, not an array literal: a literal is built as an array first (an allocation per sample).
                var actions = Actions()
                actions.append(.publish(message))
                if firstOfItsKind { actions.append(.publishDeviceList) }
                return actions
            }
            let publications = batcher.add(sample, device: id, at: now)
            count(id, publications.count)
            // A sensor seen for the first time is a new capability in bridge/devices (and Home Assistant).
            var actions = Actions(publications.map { .publish(sampleMessage($0)) })
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
    public var anyDeviceBatches: Bool { options.values.contains { $0.batchMilliseconds > 0 } }

    /// Takes a device's options (first sight of the device, or `device/options`); answers the samples a shorter
    /// window flushed.
    public mutating func setOptions(_ deviceOptions: DeviceOptions, for id: String) -> [OutgoingMessage] {
        options[id] = deviceOptions
        return batcher.setWindow(.milliseconds(deviceOptions.batchMilliseconds), forDevice: id).map(sampleMessage)
    }

    public func hasOptions(for id: String) -> Bool { options[id] != nil }

    private mutating func sensorTopic(_ id: String, _ sensor: SensorKind) -> String {
        if let topic = sensorTopics[id]?[sensor] { return topic }
        let topic = messages.topics.sensor(id, sensor)
        sensorTopics[id, default: [:]][sensor] = topic
        return topic
    }

    private func sampleMessage(_ publication: SamplePublication) -> OutgoingMessage {
        let delivery = sampleDelivery(publication.device)
        return messages.samples(publication, qos: delivery.qos, retain: delivery.retain)
    }

    /// The QoS and retain flag a device's options give its samples.
    private func sampleDelivery(_ id: String) -> (qos: QoS, retain: Bool) {
        let deviceOptions = options[id] ?? DeviceOptions()
        return (QoS(rawValue: deviceOptions.sampleQoS) ?? .atMostOnce, deviceOptions.retainSamples)
    }

    // MARK: What other messages need

    public func document(_ id: String) -> DeviceStateDocument { documents[id] ?? DeviceStateDocument() }

    public func sensors(of id: String) -> Set<String> { sensorsSeen[id] ?? [] }

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
        defer { messageCounts = [:] }
        return messageCounts
    }

    /// A message that is not a sample but comes from a device (a command's own output) counts for its rate.
    public mutating func count(_ id: String, _ messages: Int = 1) {
        messageCounts[id, default: 0] += messages
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
