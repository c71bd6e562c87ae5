import Gateway
import MQTT
import SimulatedWearables
import Testing
import Wear2MQTTTesting
import Wearables

/// `sensor/hrv` through `DeviceOutputMapper`: which samples feed it, when it is published and what its payload says,
/// with both clocks passed in (no timer, no wall clock).
@Suite("DeviceOutputMapper: heart-rate variability")
struct HeartRateVariabilityOutputTests {
    static let start = ContinuousClock.now
    /// The wall time of the first beat.
    static let wall: Int64 = 1_750_000_000_000

    static func mapper(_ settings: Configuration.HeartRateVariabilitySection = .init()) -> DeviceOutputMapper {
        DeviceOutputMapper(messages: ContractMessages(topics: TopicLayout(base: "t")), heartRateVariability: settings)
    }

    static func text(_ message: OutgoingMessage) -> String { String(decoding: message.payload, as: UTF8.self) }

    /// What a strap notifies: one heart-rate sample per beat here, its RR interval in it, stamped when it arrives
    /// (the beat's end plus `delay`).
    static func strapBeats(_ intervals: [Double], to id: String = "strap", from wall: Int64 = wall, delay: Int64 = 120,
                           into mapper: inout DeviceOutputMapper) -> Int64 {
        var time = wall
        for interval in intervals {
            time += Int64(interval)
            let sample = SensorSample(sensor: .heartRate, timestamp: time + delay, reading: .heartRate(
                bpm: Int(60_000 / interval), contact: true, energyExpendedKJ: nil, rrIntervalsMilliseconds: [interval]))
            _ = mapper.map(.device(id: id, .event(.sample(sample))), now: start, unixMilliseconds: time + delay)
        }
        return time + delay
    }

    /// What the E4 driver emits at each beat it detects in BVP (EmpaticaE4Driver.bvp): the interval as `ibi`, then again
    /// as a heart-rate sample's RR interval, both stamped with the beat.
    static func e4Beats(_ intervals: [Double], from wall: Int64 = wall, into mapper: inout DeviceOutputMapper) -> Int64 {
        var time = wall
        for interval in intervals {
            time += Int64(interval)
            for sample in [SensorSample(sensor: .ibi, timestamp: time, reading: .ibi(seconds: interval / 1000)),
                           SensorSample(sensor: .heartRate, timestamp: time, reading: .heartRate(
                               bpm: Int(60_000 / interval), contact: nil, energyExpendedKJ: nil, rrIntervalsMilliseconds: [interval]))] {
                _ = mapper.map(.device(id: "e4", .event(.sample(sample))), now: start, unixMilliseconds: time)
            }
        }
        return time
    }

    static func alternating(_ count: Int) -> [Double] { (0..<count).map { $0 % 2 == 0 ? 800 : 850 } }

    /// The `sensor/hrv` messages one tick gives, by mapping the due samples as the gateway core does.
    static func tick(_ mapper: inout DeviceOutputMapper, at now: ContinuousClock.Instant, wall: Int64) -> [OutgoingMessage] {
        mapper.dueVariability(at: now, unixMilliseconds: wall).flatMap { id, sample in
            mapper.map(.device(id: id, .event(.sample(sample))), now: now, unixMilliseconds: wall).compactMap { action in
                if case .publish(let message) = action { message } else { nil }
            }
        }
    }

    @Test("a strap's RR intervals: sensor/hrv 10 s after the first beat, then every 10 s, QoS 0, keys in the contract's order")
    func strapSource() throws {
        var mapper = Self.mapper()
        let end = Self.strapBeats(Self.alternating(60), into: &mapper)
        #expect(mapper.nextVariabilityDeadline == Self.start + .seconds(10))
        #expect(Self.tick(&mapper, at: Self.start + .seconds(9), wall: end).isEmpty, "not before the tick")
        let messages = Self.tick(&mapper, at: Self.start + .seconds(10), wall: end)
        let message = try #require(messages.first)
        #expect(messages.count == 1 && message.topic == "t/strap/sensor/hrv" && message.qos == .atMostOnce && !message.retain)
        // SDNN² = N·25² / (N − 1) with N = 60.
        let sdnn = (60 * 625 / 59.0).squareRoot()
        #expect(Self.text(message) == #"{"ts":\#(end),"rmssd_ms":50.0,"sdnn_ms":\#(sdnn),"pnn50_pct":0.0,"mean_hr_bpm":\#(60_000.0 / 825),"intervals":60,"rejected":0,"window_s":60}"#)
        #expect(mapper.nextVariabilityDeadline == Self.start + .seconds(20))
        #expect(mapper.sensors(of: "strap").contains("hrv"), "bridge/devices lists it once published")
        #expect(mapper.sampleCounts(of: "strap")[.hrv] == 1)
    }

    @Test("the E4 reports each beat as ibi and again in heart_rate: each beat counts once, from the ibi stream")
    func e4Source() throws {
        var mapper = Self.mapper()
        let end = Self.e4Beats(Self.alternating(60), into: &mapper)
        let message = try #require(Self.tick(&mapper, at: Self.start + .seconds(10), wall: end).first)
        let payload = try #require(GatewayHarness.object(message.payload))
        #expect(payload["intervals"]?.integer == 60 && payload["rejected"]?.integer == 0)
        #expect(payload["rmssd_ms"]?.number == 50)
    }

    @Test("too few clean intervals: the counts and the window, the measures left out (never null)")
    func tooFew() {
        var mapper = Self.mapper()
        let end = Self.strapBeats(Self.alternating(12) + [2500], into: &mapper)
        let messages = Self.tick(&mapper, at: Self.start + .seconds(10), wall: end)
        #expect(messages.map(Self.text) == [#"{"ts":\#(end),"intervals":12,"rejected":1,"window_s":60}"#])
    }

    @Test("a window that emptied publishes nothing; beats coming back start it again")
    func emptyWindow() {
        var mapper = Self.mapper(try! Configuration.parse(yaml: "hrv: {window_s: 30, interval_s: 10}").hrv)
        let end = Self.strapBeats(Self.alternating(10), into: &mapper)
        #expect(Self.tick(&mapper, at: Self.start + .seconds(10), wall: end).count == 1)
        #expect(Self.tick(&mapper, at: Self.start + .seconds(20), wall: end + 29_000).count == 1, "the last beat is still in the window")
        #expect(Self.tick(&mapper, at: Self.start + .seconds(30), wall: end + 31_000).isEmpty)
        let later = Self.strapBeats(Self.alternating(3), from: end + 40_000, into: &mapper)
        let messages = Self.tick(&mapper, at: Self.start + .seconds(40), wall: later)
        #expect(messages.map(Self.text) == [#"{"ts":\#(later),"intervals":3,"rejected":0,"window_s":30}"#])
    }

    @Test("devices without beats get no sensor/hrv; several devices each get their own, by id")
    func onlyBeatSources() {
        var mapper = Self.mapper()
        let thermometer = SensorSample(sensor: .temperature, timestamp: Self.wall, reading: .celsius(36.6))
        _ = mapper.map(.device(id: "thermo", .event(.sample(thermometer))), now: Self.start, unixMilliseconds: Self.wall)
        let noRR = SensorSample(sensor: .heartRate, timestamp: Self.wall, reading: .heartRate(
            bpm: 60, contact: true, energyExpendedKJ: nil, rrIntervalsMilliseconds: []))
        _ = mapper.map(.device(id: "band", .event(.sample(noRR))), now: Self.start, unixMilliseconds: Self.wall)
        #expect(mapper.nextVariabilityDeadline == nil, "nothing to time without beats")
        _ = Self.strapBeats(Self.alternating(5), to: "strap_b", into: &mapper)
        let end = Self.e4Beats(Self.alternating(5), into: &mapper)
        let topics = Self.tick(&mapper, at: Self.start + .seconds(10), wall: end).map(\.topic)
        #expect(topics == ["t/e4/sensor/hrv", "t/strap_b/sensor/hrv"])
    }

    @Test("a disconnect is a gap: no successive difference spans it")
    func disconnectIsAGap() throws {
        var mapper = Self.mapper()
        var end = Self.strapBeats(Self.alternating(40), into: &mapper)
        _ = mapper.map(.device(id: "strap", .connection(.disconnected)), now: Self.start, unixMilliseconds: end)
        _ = mapper.map(.device(id: "strap", .connection(.connected)), now: Self.start, unixMilliseconds: end)
        // The first beat after the reconnect equals the last before it: a difference of 0 if it were taken.
        end = Self.strapBeats([850] + Self.alternating(10), from: end, into: &mapper)
        let message = try #require(Self.tick(&mapper, at: Self.start + .seconds(10), wall: end).first)
        let payload = try #require(GatewayHarness.object(message.payload))
        #expect(payload["intervals"]?.integer == 51)
        #expect(payload["rmssd_ms"]?.number == 50)
    }

    @Test("a removed device is forgotten; hrv.enabled false computes nothing")
    func removedAndDisabled() {
        var mapper = Self.mapper()
        let end = Self.strapBeats(Self.alternating(5), into: &mapper)
        _ = mapper.map(.deviceRetired(id: "strap"), now: Self.start, unixMilliseconds: end)
        #expect(Self.tick(&mapper, at: Self.start + .seconds(10), wall: end).isEmpty)

        var disabled = Self.mapper(try! Configuration.parse(yaml: "hrv: {enabled: false}").hrv)
        let later = Self.strapBeats(Self.alternating(40), into: &disabled)
        #expect(disabled.nextVariabilityDeadline == nil)
        #expect(Self.tick(&disabled, at: Self.start + .seconds(60), wall: later).isEmpty)
    }

    @Test("any hrv reading, odd numbers included (NaN, infinities, extremes), writes one JSON object with ts first and the counts last")
    func payloadOfArbitraryValues() throws {
        var random = SimulationRandom(seed: 0x4856_5250)
        let odd: [Double] = [.nan, .infinity, -.infinity, 0, -0.0, .greatestFiniteMagnitude, .leastNonzeroMagnitude, 1e-5, 1.5e20]
        let value = { (random: inout SimulationRandom) -> Double in
            random.next() % 3 == 0 ? odd[Int(random.next() % UInt64(odd.count))] : Double(random.next() % 100_000) / 7
        }
        for _ in 0..<500 {
            let measures = random.next() % 4 == 0 ? nil : HeartRateVariability.Measures(
                rmssdMilliseconds: value(&random), sdnnMilliseconds: value(&random), pnn50Percent: value(&random),
                meanHeartRateBPM: value(&random))
            let reading = HeartRateVariability(measures: measures, intervals: Int(random.next() % 2000),
                                               rejected: Int(random.next() % 2000), windowSeconds: Int(random.next() % 301))
            let sample = SensorSample(sensor: .hrv, timestamp: Int64(bitPattern: random.next()), reading: .heartRateVariability(reading))
            let payload = SamplePayload.single(sample)
            let object = try #require(GatewayHarness.object(payload), "\(String(decoding: payload, as: UTF8.self))")
            #expect(object["ts"]?.integer == sample.timestamp && object["intervals"]?.integer == Int64(reading.intervals))
            #expect((object["rmssd_ms"] != nil) == (measures != nil), "measures are written whole or not at all")
            #expect(String(decoding: payload, as: UTF8.self).hasPrefix(#"{"ts":"#))
        }
    }

    @Test("with batch_ms on, sensor/hrv takes the batch shape like every sensor topic")
    func batched() throws {
        var mapper = Self.mapper()
        var options = DeviceOptions()
        options.batchMilliseconds = 250
        _ = mapper.setOptions(options, for: "strap")
        let end = Self.strapBeats(Self.alternating(40), into: &mapper)
        _ = Self.tick(&mapper, at: Self.start + .seconds(10), wall: end)
        let flushed = mapper.dueSamples(at: Self.start + .seconds(11)).filter { $0.topic == "t/strap/sensor/hrv" }
        let payload = Self.text(try #require(flushed.first))
        #expect(payload.hasPrefix(#"{"samples":[{"ts":\#(end),"rmssd_ms":50.0,"#))
    }
}
