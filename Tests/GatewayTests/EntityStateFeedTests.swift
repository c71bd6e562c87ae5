@testable import Gateway
import Testing
import Wearables

/// Home Assistant's entities fed from fast streams: at most one value per interval, the mean or the latest.
@Suite("Entity state feed: fast streams, calm entities")
struct EntityStateFeedTests {
    let start = ContinuousClock.now

    func heartRate(_ bpm: Int) -> SensorSample {
        SensorSample(sensor: .heartRate, timestamp: 0, reading: .heartRate(bpm: bpm, contact: nil, energyExpendedKJ: nil,
                                                                          rrIntervalsMilliseconds: []))
    }

    @Test("the first value goes out at once; then one mean per interval, whatever the rate")
    func onePerInterval() {
        var feed = EntityStateFeed(interval: .seconds(5))
        #expect(feed.add(heartRate(60), device: "strap", at: start).map(\.value) == [60])
        var published: [Double] = []
        for second in 1...10 {
            published += feed.add(heartRate(60 + second), device: "strap", at: start + .seconds(second)).map(\.value)
        }
        // Seconds 1–5 (61…65) close at 5 s: mean 63; seconds 6–10 (66…70) close at 10 s: mean 68.
        #expect(published == [63, 68])
    }

    @Test("a strap's RR intervals feed the inter-beat interval entity, their mean per interval")
    func rrIntervals() {
        var feed = EntityStateFeed(interval: .seconds(5))
        let sample = { (rr: [Double]) in
            SensorSample(sensor: .heartRate, timestamp: 0, reading: .heartRate(bpm: 72, contact: true, energyExpendedKJ: nil,
                                                                              rrIntervalsMilliseconds: rr))
        }
        #expect(feed.add(sample([800, 820]), device: "strap", at: start).map(\.key) == ["heart_rate", "ibi"])
        _ = feed.add(sample([840, 860]), device: "strap", at: start + .seconds(1))
        #expect(feed.due(at: start + .seconds(5)).first { $0.key == "ibi" }?.value == 840, "(820 + 840 + 860) / 3")
    }

    @Test("latest for spot values: SpO2 and pulse rate from one reading, each its own entity")
    func latestForSpotValues() {
        var feed = EntityStateFeed(interval: .seconds(5))
        let first = feed.add(SensorSample(sensor: .spo2, timestamp: 0, reading: .spo2(percent: 97, pulseBPM: 64)), device: "ox", at: start)
        #expect(first.map(\.key) == ["spo2", "pulse_rate"])
        _ = feed.add(SensorSample(sensor: .spo2, timestamp: 0, reading: .spo2(percent: 95, pulseBPM: 70)), device: "ox", at: start + .seconds(1))
        _ = feed.add(SensorSample(sensor: .spo2, timestamp: 0, reading: .spo2(percent: 96, pulseBPM: 66)), device: "ox", at: start + .seconds(2))
        #expect(feed.due(at: start + .seconds(5)).map(\.value) == [66, 96], "pulse_rate then spo2, sorted by key")
        #expect(feed.due(at: start + .seconds(20)).isEmpty, "nothing new, nothing sent")
    }

    @Test("raw waveforms and motion axes are not entities")
    func rawStreamsAreNotFed() {
        var feed = EntityStateFeed(interval: .seconds(5))
        #expect(feed.add(SensorSample(sensor: .bvp, timestamp: 0, reading: .bvp(value: 3)), device: "e4", at: start).isEmpty)
        #expect(feed.add(SensorSample(sensor: .accelerometer, timestamp: 0, reading: .vector(x: 0, y: 0, z: 1, accuracy: nil)),
                         device: "e4", at: start).isEmpty)
    }

    @Test("skin and body temperature are separate entities; a forgotten device holds nothing")
    func temperaturesAndForget() {
        var feed = EntityStateFeed(interval: .seconds(5))
        #expect(feed.add(SensorSample(sensor: .skinTemperature, timestamp: 0, reading: .celsius(33.1)), device: "e4", at: start)
            .map(\.key) == ["skin_temperature"])
        #expect(feed.add(SensorSample(sensor: .temperature, timestamp: 0, reading: .celsius(36.6)), device: "t", at: start)
            .map(\.key) == ["temperature"])
        _ = feed.add(SensorSample(sensor: .temperature, timestamp: 0, reading: .celsius(36.8)), device: "t", at: start + .seconds(1))
        feed.forget("t")
        #expect(feed.due(at: start + .seconds(10)).isEmpty)
    }

    @Test("a value that is not a number is not fed")
    func nonFiniteValues() {
        var feed = EntityStateFeed(interval: .seconds(5))
        #expect(feed.add(SensorSample(sensor: .eda, timestamp: 0, reading: .eda(microsiemens: .nan)), device: "e4", at: start).isEmpty)
    }
}

@Suite("Expected sensors: entities before the first sample")
struct ExpectedSensorsTests {
    @Test("a standard device's SIG services name its streams; the E4 always streams its six; others wait for samples")
    func expected() {
        #expect(ExpectedSensors.sensors(StandardGATTDriver.driverDescription, serviceUUIDs: ["0000180d-0000-1000-8000-00805f9b34fb",
                                                                          "0000180f-0000-1000-8000-00805f9b34fb"]) == ["heart_rate"])
        #expect(ExpectedSensors.sensors(StandardGATTDriver.driverDescription, serviceUUIDs: ["00001822-0000-1000-8000-00805f9b34fb"]) == ["spo2"])
        #expect(ExpectedSensors.sensors(EmpaticaE4Driver.driverDescription, serviceUUIDs: []) == ["heart_rate", "eda", "skin_temperature", "ibi", "bvp", "accelerometer"])
        #expect(ExpectedSensors.sensors(GoFITDriver.driverDescription, serviceUUIDs: ["0000180d-0000-1000-8000-00805f9b34fb"]).isEmpty)
    }

    @Test("a standard pulse oximeter raises spot_check events; nothing else does")
    func spotCheckEvents() {
        #expect(ExpectedSensors.serviceEvents(StandardGATTDriver.driverDescription, serviceUUIDs: ["00001822-0000-1000-8000-00805f9b34fb"]) == ["spot_check"])
        #expect(ExpectedSensors.serviceEvents(StandardGATTDriver.driverDescription, serviceUUIDs: ["0000180d-0000-1000-8000-00805f9b34fb"]).isEmpty)
        #expect(ExpectedSensors.serviceEvents(GoFITDriver.driverDescription, serviceUUIDs: ["00001822-0000-1000-8000-00805f9b34fb"]).isEmpty)
    }
}
