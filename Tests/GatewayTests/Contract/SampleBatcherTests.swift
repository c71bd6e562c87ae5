import Testing
import Wearables

@testable import Gateway

private let start = ContinuousClock.now

private func at(_ milliseconds: Int) -> ContinuousClock.Instant { start.advanced(by: .milliseconds(milliseconds)) }

private func beat(_ bpm: Int, ts: Int64) -> SensorSample {
    SensorSample(sensor: .heartRate, timestamp: ts, reading: .heartRate(bpm: bpm, contact: nil, energyExpendedKJ: nil, rrIntervalsMilliseconds: []))
}

private func eda(ts: Int64) -> SensorSample {
    SensorSample(sensor: .eda, timestamp: ts, reading: .eda(microsiemens: 0.5))
}

private func text(_ publication: SamplePublication) -> String { String(decoding: publication.payload, as: UTF8.self) }

@Suite("Sample batching")
struct SampleBatcherTests {
    @Test("with batching off each sample is published alone, as a single sample")
    func off() {
        var batcher = SampleBatcher()
        let out = batcher.add(beat(70, ts: 1), device: "strap", at: at(0))
        #expect(out == [SamplePublication(device: "strap", sensor: .heartRate, samples: [beat(70, ts: 1)], isBatch: false)])
        #expect(text(out[0]) == #"{"ts":1,"bpm":70}"#)
        #expect(batcher.nextDeadline == nil)
        #expect(batcher.pendingCount == 0)
    }

    @Test("with batch_ms 250 samples wait until the window closes, then go out as {\"samples\":[…]}")
    func window() {
        var batcher = SampleBatcher()
        #expect(batcher.setWindow(.milliseconds(250), forDevice: "strap").isEmpty)
        #expect(batcher.add(beat(70, ts: 1), device: "strap", at: at(0)).isEmpty)
        #expect(batcher.add(beat(71, ts: 2), device: "strap", at: at(100)).isEmpty)
        #expect(batcher.nextDeadline == at(250))
        #expect(batcher.due(at: at(249)).isEmpty)
        let out = batcher.due(at: at(250))
        #expect(out.count == 1)
        #expect(out.first?.isBatch == true)
        #expect(out.first.map(text) == #"{"samples":[{"ts":1,"bpm":70},{"ts":2,"bpm":71}]}"#)
        #expect(batcher.nextDeadline == nil)
        #expect(batcher.due(at: at(1000)).isEmpty)
    }

    @Test("a window holding one sample is still a batch: the shape follows the option, not the count")
    func singleSampleBatch() {
        var batcher = SampleBatcher()
        _ = batcher.setWindow(.milliseconds(100), forDevice: "strap")
        _ = batcher.add(beat(70, ts: 1), device: "strap", at: at(0))
        #expect(batcher.due(at: at(100)).map(text) == [#"{"samples":[{"ts":1,"bpm":70}]}"#])
    }

    @Test("a sample arriving after the window closed hands out the closed window and opens the next")
    func lateSample() {
        var batcher = SampleBatcher()
        _ = batcher.setWindow(.milliseconds(100), forDevice: "strap")
        _ = batcher.add(beat(70, ts: 1), device: "strap", at: at(0))
        let out = batcher.add(beat(71, ts: 2), device: "strap", at: at(150))
        #expect(out.map(\.samples) == [[beat(70, ts: 1)]])
        #expect(batcher.nextDeadline == at(250))
        #expect(batcher.due(at: at(250)).map(\.samples) == [[beat(71, ts: 2)]])
    }

    @Test("a sample arriving exactly when the window closes belongs to the next window")
    func sampleAtDeadline() {
        var batcher = SampleBatcher()
        _ = batcher.setWindow(.milliseconds(100), forDevice: "strap")
        _ = batcher.add(beat(70, ts: 1), device: "strap", at: at(0))
        #expect(batcher.add(beat(71, ts: 2), device: "strap", at: at(100)).map(\.samples) == [[beat(70, ts: 1)]])
        #expect(batcher.flushAll().map(\.samples) == [[beat(71, ts: 2)]])
    }

    @Test("a window that reaches the size cap goes out at once")
    func sizeCap() {
        var batcher = SampleBatcher(maximumBatchSize: 3)
        _ = batcher.setWindow(.seconds(10), forDevice: "band")
        #expect(batcher.add(eda(ts: 1), device: "band", at: at(0)).isEmpty)
        #expect(batcher.add(eda(ts: 2), device: "band", at: at(1)).isEmpty)
        let full = batcher.add(eda(ts: 3), device: "band", at: at(2))
        #expect(full.map { $0.samples.map(\.timestamp) } == [[1, 2, 3]])
        #expect(batcher.nextDeadline == nil)
        #expect(batcher.add(eda(ts: 4), device: "band", at: at(3)).isEmpty)
        #expect(batcher.nextDeadline == at(10_003))
    }

    @Test("the default cap is 500 samples")
    func defaultCap() {
        var batcher = SampleBatcher()
        _ = batcher.setWindow(.seconds(10), forDevice: "band")
        var published: [SamplePublication] = []
        for index in 0..<1001 { published += batcher.add(eda(ts: Int64(index)), device: "band", at: at(index)) }
        #expect(published.map(\.samples.count) == [500, 500])
        #expect(batcher.pendingCount == 1)
    }

    @Test("devices and sensors batch separately, and due windows come out by deadline, device, sensor")
    func separateWindows() {
        var batcher = SampleBatcher()
        _ = batcher.setWindow(.milliseconds(100), forDevice: "b")
        _ = batcher.setWindow(.milliseconds(100), forDevice: "a")
        _ = batcher.add(eda(ts: 1), device: "b", at: at(0))
        _ = batcher.add(beat(60, ts: 1), device: "b", at: at(0))
        _ = batcher.add(eda(ts: 1), device: "a", at: at(0))
        _ = batcher.add(eda(ts: 2), device: "a", at: at(-10))
        let single = batcher.add(beat(61, ts: 1), device: "unbatched", at: at(0))
        #expect(single.map(\.isBatch) == [false])
        let out = batcher.due(at: at(100))
        #expect(out.map { "\($0.device)/\($0.sensor.rawValue)" } == ["a/eda", "b/eda", "b/heart_rate"])
    }

    @Test("flushing a device on disconnect hands out its windows only; flushAll at shutdown hands out the rest")
    func flush() {
        var batcher = SampleBatcher()
        _ = batcher.setWindow(.seconds(1), forDevice: "a")
        _ = batcher.setWindow(.seconds(1), forDevice: "b")
        _ = batcher.add(eda(ts: 1), device: "a", at: at(0))
        _ = batcher.add(eda(ts: 2), device: "b", at: at(10))
        _ = batcher.add(beat(70, ts: 3), device: "b", at: at(5))
        #expect(batcher.flush(device: "a").map(\.device) == ["a"])
        #expect(batcher.flush(device: "a").isEmpty)
        #expect(batcher.flushAll().map { "\($0.device)/\($0.sensor.rawValue)" } == ["b/heart_rate", "b/eda"])
        #expect(batcher.pendingCount == 0)
        #expect(batcher.nextDeadline == nil)
    }

    @Test("changing the window hands out what was collected under the old one; zero turns batching off")
    func changeWindow() {
        var batcher = SampleBatcher()
        _ = batcher.setWindow(.seconds(1), forDevice: "a")
        _ = batcher.add(eda(ts: 1), device: "a", at: at(0))
        #expect(batcher.setWindow(.seconds(1), forDevice: "a").isEmpty)
        #expect(batcher.pendingCount == 1)
        #expect(batcher.setWindow(.zero, forDevice: "a").map(\.samples.count) == [1])
        #expect(batcher.window(forDevice: "a") == .zero)
        #expect(batcher.add(eda(ts: 2), device: "a", at: at(1)).map(\.isBatch) == [false])
    }
}
