import Gateway
import MQTT
import Testing
import Wearables

/// The contract's rules for device output, as a pure value: what each report becomes, with no broker and no clock.
@Suite("DeviceOutputMapper: device output to messages")
struct DeviceOutputMapperTests {
    static let start = ContinuousClock.now
    static let wall: Int64 = 1_750_000_000_000

    func mapper() -> DeviceOutputMapper { DeviceOutputMapper(messages: ContractMessages(topics: TopicLayout(base: "t"))) }

    func heartRate(_ bpm: Int, at timestamp: Int64) -> ManagerOutput {
        .device(id: "strap", .event(.sample(SensorSample(sensor: .heartRate, timestamp: timestamp, reading: .heartRate(
            bpm: bpm, contact: true, energyExpendedKJ: nil, rrIntervalsMilliseconds: [])))))
    }

    func published(_ actions: some Sequence<DeviceOutputMapper.Action>) -> [OutgoingMessage] {
        actions.compactMap { if case .publish(let message) = $0 { message } else { nil } }
    }

    func text(_ message: OutgoingMessage?) -> String { message.map { String(decoding: $0.payload, as: UTF8.self) } ?? "" }

    @Test("a sample is one QoS 0, unretained message on <id>/sensor/<kind>, counted for bridge/health")
    func sampleIsOneMessage() {
        var mapper = mapper()
        let messages = published(mapper.map(heartRate(72, at: 5), now: Self.start, unixMilliseconds: Self.wall))
        #expect(messages.map(\.topic) == ["t/strap/sensor/heart_rate"])
        #expect(messages.first?.qos == .atMostOnce && messages.first?.retain == false)
        #expect(text(messages.first).hasPrefix(#"{"ts":5,"bpm":72"#))
        #expect(mapper.sensors(of: "strap") == ["heart_rate"])
        #expect(mapper.map(heartRate(73, at: 6), now: Self.start, unixMilliseconds: Self.wall).last != .publishDeviceList,
                "only the first sample of a sensor refreshes the device list")
        #expect(mapper.takeMessageCounts() == ["strap": 2])
        #expect(mapper.takeMessageCounts().isEmpty, "the count starts again")
    }

    @Test("connected: retained state, availability online, a device_connected event and the device list")
    func connectedDevice() {
        var mapper = mapper()
        let actions = mapper.map(.device(id: "strap", .connection(.connected)), now: Self.start, unixMilliseconds: Self.wall)
        let messages = published(actions)
        #expect(messages.map(\.topic) == ["t/strap", "t/strap/availability", "t/bridge/event"])
        #expect(messages[0].retain && text(messages[0]).contains(#""connection":"connected""#))
        #expect(messages[1].retain && text(messages[1]) == #"{"state":"online"}"#)
        #expect(text(messages[2]).contains("device_connected"))
        #expect(actions.last == .publishDeviceList)
        #expect(mapper.retainedDeviceMessages().map(\.topic) == ["t/strap", "t/strap/availability"])
        #expect(mapper.offlineMessages().map(text) == [#"{"state":"offline"}"#])
    }

    @Test("a fitness record is durable, never a plain publish")
    func recordIsDurable() {
        var mapper = mapper()
        let record = FitnessRecord(kind: "steps", id: "s-1", timestamp: 9, fields: ["steps": 120])
        let actions = mapper.map(.device(id: "band", .event(.record(record))), now: Self.start, unixMilliseconds: Self.wall)
        guard case .publishDurable(let message)? = actions.first, actions.count == 1 else {
            Issue.record("expected one durable publish, got \(actions)")
            return
        }
        #expect(message.topic == "t/band/fitness/steps" && message.qos == .atLeastOnce)
    }

    @Test("a state patch that changes nothing publishes nothing; manufacturer or model refresh the device list")
    func unchangedStateIsQuiet() {
        var mapper = mapper()
        let patch = ManagerOutput.device(id: "strap", .event(.state(["battery": 77])))
        #expect(published(mapper.map(patch, now: Self.start, unixMilliseconds: Self.wall)).map(\.topic) == ["t/strap"])
        #expect(mapper.map(patch, now: Self.start, unixMilliseconds: Self.wall).isEmpty)
        let named = mapper.map(.device(id: "strap", .event(.state(["manufacturer": "Polar"]))), now: Self.start,
                               unixMilliseconds: Self.wall)
        #expect(named.last == .publishDeviceList)
    }

    @Test("with batch_ms, samples wait for their window and leave as one {\"samples\":[…]}; a disconnect flushes them")
    func batching() {
        var mapper = mapper()
        var options = DeviceOptions()
        options.batchMilliseconds = 1000
        #expect(mapper.setOptions(options, for: "strap").isEmpty)
        #expect(mapper.map(heartRate(70, at: 1), now: Self.start, unixMilliseconds: Self.wall) == [.publishDeviceList],
                "held for the batch; a first heart rate is a new capability")
        #expect(mapper.map(heartRate(71, at: 2), now: Self.start + .milliseconds(10), unixMilliseconds: Self.wall).isEmpty)
        #expect(mapper.nextBatchDeadline == Self.start + .seconds(1))
        let due = mapper.dueSamples(at: Self.start + .seconds(1))
        #expect(due.count == 1 && text(due.first).hasPrefix(#"{"samples":[{"ts":1"#))
        _ = mapper.map(heartRate(72, at: 3), now: Self.start + .seconds(2), unixMilliseconds: Self.wall)
        let flushed = published(mapper.map(.device(id: "strap", .connection(.disconnected)), now: Self.start + .seconds(2),
                                           unixMilliseconds: Self.wall))
        #expect(flushed.contains { $0.topic == "t/strap/sensor/heart_rate" && text($0).contains(#""bpm":72"#) })
    }

    @Test("a retired device's retained topics are cleared and its document forgotten")
    func retiredDevice() {
        var mapper = mapper()
        _ = mapper.map(.device(id: "strap", .connection(.connected)), now: Self.start, unixMilliseconds: Self.wall)
        let cleared = published(mapper.map(.deviceRetired(id: "strap"), now: Self.start, unixMilliseconds: Self.wall))
        #expect(cleared.contains { $0.topic == "t/strap" && $0.retain && $0.payload.isEmpty })
        #expect(cleared.contains { $0.topic == "t/strap/availability" && $0.retain && $0.payload.isEmpty })
        #expect(mapper.documents["strap"] == nil)
    }

    @Test("the descriptions say which layer runs a command: dfu at the gateway, connect at the session, the rest the driver")
    func commandRoutes() {
        let commands = WearableDrivers.all.commandsByName
        #expect(commands["dfu"]?.route == .gateway && commands["dfu/cancel"]?.route == .gateway)
        #expect(commands["connect"]?.route == .session && commands["disconnect"]?.route == .session)
        #expect(commands["find"]?.route == .driver && commands["configure"]?.route == .driver)
        #expect(commands["pair"]?.route == .pairing)
    }
}
