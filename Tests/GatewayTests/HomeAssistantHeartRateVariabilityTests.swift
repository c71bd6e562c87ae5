@testable import Gateway
import MQTT
import Testing
import Wearables

/// Heart-rate variability in Home Assistant: RMSSD, SDNN and mean HR entities on calm topics, unknown (not a stale
/// number) while the window has too few clean intervals, announced up front for a driver that always sends beats.
@Suite("Home Assistant: heart-rate variability entities")
struct HomeAssistantHeartRateVariabilityTests {
    let start = ContinuousClock.now

    static func hrv(_ measures: HeartRateVariability.Measures?, intervals: Int = 60) -> SensorSample {
        SensorSample(sensor: .hrv, timestamp: 1_750_000_000_000, reading: .heartRateVariability(
            HeartRateVariability(measures: measures, intervals: intervals, rejected: 0, windowSeconds: 60)))
    }

    static let measures = HeartRateVariability.Measures(rmssdMilliseconds: 50, sdnnMilliseconds: 25.21, pnn50Percent: 0,
                                                        meanHeartRateBPM: 72.727)

    static func payloads(_ messages: [OutgoingMessage]) -> [String: String] {
        Dictionary(uniqueKeysWithValues: messages.map { ($0.topic, String(decoding: $0.payload, as: UTF8.self)) })
    }

    @Test("an hrv sample feeds ha/hrv_rmssd, ha/hrv_sdnn and ha/hrv_mean_hr; too few intervals publish None (unknown)")
    func entityValues() {
        let publisher = HomeAssistantPublisher(Configuration.HomeAssistantSection(), topics: TopicLayout(base: "w2m"),
                                               gatewayID: "pi", stateDirectory: nil)
        let (first, newEntity) = publisher.sample(Self.hrv(Self.measures), device: "strap", at: start)
        #expect(newEntity)
        // The first value of an entity goes out as it is; later ones as the feed rounds them (0.1).
        #expect(Self.payloads(first) == ["w2m/strap/ha/hrv_rmssd": "50", "w2m/strap/ha/hrv_sdnn": "25.21",
                                         "w2m/strap/ha/hrv_mean_hr": "72.727"])
        let (second, _) = publisher.sample(Self.hrv(Self.measures), device: "strap", at: start + .seconds(10))
        #expect(Self.payloads(second) == ["w2m/strap/ha/hrv_rmssd": "50", "w2m/strap/ha/hrv_sdnn": "25.2",
                                          "w2m/strap/ha/hrv_mean_hr": "72.7"])
        let (none, _) = publisher.sample(Self.hrv(nil, intervals: 12), device: "strap", at: start + .seconds(20))
        #expect(Self.payloads(none) == ["w2m/strap/ha/hrv_rmssd": "None", "w2m/strap/ha/hrv_sdnn": "None",
                                        "w2m/strap/ha/hrv_mean_hr": "None"])
        #expect(Self.payloads(publisher.lastValues())["w2m/strap/ha/hrv_rmssd"] == "None", "Home Assistant restarting sees unknown too")
        #expect(publisher.fedEntities(of: "strap") == ["hrv_rmssd", "hrv_sdnn", "hrv_mean_hr"])
    }

    @Test("other streams keep refusing a value that is not a number: only HRV turns one into unknown")
    func otherStreamsIgnoreNaN() {
        var feed = EntityStateFeed(interval: .seconds(5))
        let eda = SensorSample(sensor: .eda, timestamp: 0, reading: .eda(microsiemens: .nan))
        #expect(feed.add(eda, device: "e4", at: start).isEmpty)
    }

    @Test("the entities: RMSSD and SDNN in ms (duration), mean heart rate in bpm, on the calm topics")
    func discoveryComponents() throws {
        let discovery = HomeAssistantDiscovery(prefix: "homeassistant", topics: TopicLayout(base: "w2m"), gatewayID: "pi", version: "9")
        let wearable = DiscoveredWearable(id: "strap", address: "C0:FF:EE:00:00:01", driver: "standard",
                                          sensors: Set(DiscoveredWearable.entityKeys["hrv"] ?? []))
        let body = try #require(try JSONParser.parse(discovery.wearable(wearable).payload, limits: JSONLimits(maximumBytes: 1 << 20)).object)
        let components = try #require(body["cmps"]?.object)
        #expect(components["hrv_rmssd"]?["unit_of_measurement"]?.text == "ms" && components["hrv_rmssd"]?["device_class"]?.text == "duration")
        #expect(components["hrv_rmssd"]?["state_topic"]?.text == "w2m/strap/ha/hrv_rmssd")
        #expect(components["hrv_rmssd"]?["name"]?.text == "HRV RMSSD")
        #expect(components["hrv_sdnn"]?["unit_of_measurement"]?.text == "ms")
        #expect(components["hrv_mean_hr"]?["unit_of_measurement"]?.text == "bpm" && components["hrv_mean_hr"]?["state_class"]?.text == "measurement")
    }

    @Test("the E4 always sends beats: its HRV entities are announced when it connects, unless hrv is off; a strap's come with its first RR interval")
    func expectedUpFront() {
        #expect(ExpectedSensors.sensors(EmpaticaE4Driver.driverDescription, serviceUUIDs: [], heartRateVariability: true).contains("hrv"))
        #expect(!ExpectedSensors.sensors(EmpaticaE4Driver.driverDescription, serviceUUIDs: [], heartRateVariability: false).contains("hrv"))
        #expect(!ExpectedSensors.sensors(StandardGATTDriver.driverDescription, serviceUUIDs: ["0000180d-0000-1000-8000-00805f9b34fb"],
                                         heartRateVariability: true).contains("hrv"))
    }
}
