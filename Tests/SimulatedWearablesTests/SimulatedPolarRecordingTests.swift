import Foundation
import Testing
import Wear2MQTTTesting

@testable import SimulatedWearables
@testable import Wearables

/// The simulated H10's on-device recording: the pure engine driven with the device's time (a minute of recording
/// costs nothing), every answer read back with the driver's codecs, and the actor's PSFTP service framing answers
/// at the link's MTU.
@Suite("Simulated Polar H10 recording")
struct SimulatedPolarRecordingTests {
    func engine(bpm: Double = 60) -> PolarPSFTPEngine { PolarPSFTPEngine(meanBPM: bpm, variation: 0.03, seed: 7) }

    /// Writes `request` frame by frame at `time`; returns the answer the last frame brought.
    func send(_ request: H10RecordingRequest, to engine: inout PolarPSFTPEngine, at time: Double) throws -> PolarPSFTPEngine.Answer {
        let frames = try request.frames(mtu: 20)
        for frame in frames.dropLast() { #expect(engine.receive(frame, at: time) == .none) }
        return engine.receive(try #require(frames.last), at: time)
    }

    func message(_ answer: PolarPSFTPEngine.Answer) throws -> [UInt8] {
        guard case .message(let bytes) = answer else { Issue.record("expected a message, got \(answer)"); return [] }
        return bytes
    }

    @Test("a minute of heart rate at 1 s: start, status, stop, list as the SDK walks it, fetch 60 values, remove")
    func heartRateMinute() throws {
        var h10 = engine(bpm: 72)
        #expect(try send(.start(identifier: "run1", sampleType: .heartRate, interval: .oneSecond), to: &h10, at: 10) == .code(0))
        let running = try H10RecordingStatus.decode(message(send(.status, to: &h10, at: 40)))
        #expect(running == H10RecordingStatus(isRecording: true, identifier: "run1"))
        // Nothing is listed while it records: the file is written when it stops.
        #expect(try PSFTPDirectory.decode(message(send(.list(directory: "/"), to: &h10, at: 40))).entries.isEmpty)
        #expect(try send(.stop, to: &h10, at: 70) == .code(0))
        #expect(try H10RecordingStatus.decode(message(send(.status, to: &h10, at: 71))) == H10RecordingStatus(isRecording: false))

        let root = try PSFTPDirectory.decode(message(send(.list(directory: "/"), to: &h10, at: 80)))
        let first = H10ExerciseListing.step(directory: "/", listing: root)
        #expect(first.subdirectories == ["/run1/"] && first.exercises.isEmpty)
        let directory = try PSFTPDirectory.decode(message(send(.list(directory: "/run1/"), to: &h10, at: 80)))
        let found = H10ExerciseListing.step(directory: "/run1/", listing: directory).exercises
        #expect(found.map(\.identifier) == ["run1"] && found.map(\.path) == ["/run1/SAMPLES.BPB"])

        let bytes = try message(send(.fetch(path: "/run1/SAMPLES.BPB"), to: &h10, at: 500))
        #expect(UInt64(bytes.count) == found.first?.size)
        let samples = try H10ExerciseSamples.decode(bytes)
        #expect(samples.intervalMilliseconds == 1000 && samples.rrIntervalsMilliseconds == nil)
        #expect(samples.heartRates.count == 60, "one per second from 10 s to 70 s, nothing after the stop")
        #expect(samples.heartRates.allSatisfy { (68...77).contains($0) }, "\(samples.heartRates)")
        #expect(Set(samples.heartRates).count > 1, "the heart varies")

        #expect(try send(.remove(path: "/run1/SAMPLES.BPB"), to: &h10, at: 501) == .code(0))
        #expect(try PSFTPDirectory.decode(message(send(.list(directory: "/"), to: &h10, at: 502))).entries.isEmpty)
        #expect(try send(.fetch(path: "/run1/SAMPLES.BPB"), to: &h10, at: 503) == .code(103))
    }

    @Test("RR intervals: one per beat at the heart's rate; 5 s heart rate: one value per 5 s")
    func rrAndFiveSeconds() throws {
        var h10 = engine(bpm: 150)
        #expect(try send(.start(identifier: "rr", sampleType: .rrInterval, interval: .oneSecond), to: &h10, at: 0) == .code(0))
        #expect(try send(.stop, to: &h10, at: 60) == .code(0))
        let rr = try H10ExerciseSamples.decode(message(send(.fetch(path: "/rr/SAMPLES.BPB"), to: &h10, at: 61)))
        let intervals = try #require(rr.rrIntervalsMilliseconds)
        #expect((147...151).contains(intervals.count), "150 beats a minute: \(intervals.count)")
        #expect(intervals.allSatisfy { (388...412).contains($0) }, "400 ms ± 3 %")
        #expect(rr.heartRates.isEmpty)
        #expect(try send(.remove(path: "/rr/SAMPLES.BPB"), to: &h10, at: 62) == .code(0))

        #expect(try send(.start(identifier: "slow", sampleType: .heartRate, interval: .fiveSeconds), to: &h10, at: 100) == .code(0))
        #expect(try send(.stop, to: &h10, at: 160) == .code(0))
        let slow = try H10ExerciseSamples.decode(message(send(.fetch(path: "/slow/SAMPLES.BPB"), to: &h10, at: 161)))
        #expect(slow.intervalMilliseconds == 5000 && slow.heartRates.count == 12)
    }

    @Test("an hour recorded alone, across connections, costs one fetch; the same seed gives the same file")
    func longRecordingAcrossConnections() throws {
        var h10 = engine()
        var twin = engine()
        #expect(try send(.start(identifier: "night", sampleType: .heartRate, interval: .oneSecond), to: &h10, at: 0) == .code(0))
        #expect(try send(.start(identifier: "night", sampleType: .heartRate, interval: .oneSecond), to: &twin, at: 0) == .code(0))
        h10.connected()
        #expect(try H10RecordingStatus.decode(message(send(.status, to: &h10, at: 1800))).isRecording)
        #expect(try send(.stop, to: &h10, at: 3600) == .code(0))
        #expect(try send(.stop, to: &twin, at: 3600) == .code(0))
        let file = try message(send(.fetch(path: "/night/SAMPLES.BPB"), to: &h10, at: 3601))
        #expect(try H10ExerciseSamples.decode(file).heartRates.count == 3600)
        #expect(try message(send(.fetch(path: "/night/SAMPLES.BPB"), to: &twin, at: 9999)) == file)
    }

    @Test("the strap's refusals: busy while recording, one recording at a time, stop when idle, unknown paths and requests")
    func refusals() throws {
        var h10 = engine()
        #expect(try send(.stop, to: &h10, at: 0) == .code(106))
        #expect(try send(.fetch(path: "/nothing/SAMPLES.BPB"), to: &h10, at: 0) == .code(103))
        #expect(try send(.remove(path: "/nothing/SAMPLES.BPB"), to: &h10, at: 0) == .code(103))
        #expect(try send(.list(directory: "/nothing/"), to: &h10, at: 0) == .code(103))
        #expect(try send(.start(identifier: "a", sampleType: .heartRate, interval: .oneSecond), to: &h10, at: 0) == .code(0))
        #expect(try send(.start(identifier: "b", sampleType: .heartRate, interval: .oneSecond), to: &h10, at: 1) == .code(202))
        #expect(try send(.fetch(path: "/a/SAMPLES.BPB"), to: &h10, at: 2) == .code(103), "not written until it stops")
        #expect(try send(.stop, to: &h10, at: 3) == .code(0))
        #expect(try send(.start(identifier: "b", sampleType: .heartRate, interval: .oneSecond), to: &h10, at: 4) == .code(106))
        // A query it does not know, parameters it cannot read, a PUT; the SDK's cancel frame answers nothing.
        let unknownQuery = try PSFTPFrame.split(PSFTPRequestMessage.query(id: 99).encode(), mtu: 20)[0].encode()
        #expect(h10.receive(unknownQuery, at: 5) == .code(101))
        let garbage = try PSFTPFrame.split(PSFTPRequestMessage.query(id: 14, parameters: [0xFF, 0xFF]).encode(), mtu: 20)[0].encode()
        #expect(h10.receive(garbage, at: 5) == .code(102))
        #expect(h10.receive(PSFTPFrame.cancel.encode(), at: 5) == .none)
        #expect(try send(.remove(path: "/a/SAMPLES.BPB"), to: &h10, at: 6) == .code(0))
        #expect(try send(.start(identifier: "b", sampleType: .heartRate, interval: .oneSecond), to: &h10, at: 7) == .code(0))
    }

    @Test("the H10 serves PSFTP (0xFEEE) and frames a long answer at the link's MTU; the Verity Sense has no PSFTP")
    func serviceAndFraming() async throws {
        let kind = try #require(SimulatedDeviceCatalog.kind(named: "polar_h10"))
        let clock = ManualClock()
        let h10 = try kind.make(SimulatedDeviceConfiguration(seed: 1, options: ["recording_speed": .double(3600)],
                                                             time: clock.timeSource))
        let service = try #require(h10.services.first { $0.uuid == BluetoothUUID(string: PolarUUID.Service.fileTransfer) })
        let mtu = SimulatedPolarSensor.fileTransferMTUUUID
        #expect(service.characteristics.first { $0.uuid == mtu }?.flags == [.write, .writeWithoutResponse, .notify])
        let sense = try #require(SimulatedDeviceCatalog.kind(named: "polar_verity_sense")).make(SimulatedDeviceConfiguration(seed: 1))
        #expect(!sense.services.contains { $0.uuid == BluetoothUUID(string: PolarUUID.Service.fileTransfer) })
        #expect(throws: SimulatedDeviceConfigurationError.self) {
            try kind.make(SimulatedDeviceConfiguration(seed: 1, options: ["recording_speed": .double(0.5)]))
        }

        let link = RecordingPeripheralLink(mtu: 23)
        let running = try await run(h10, on: link, clock: clock)
        defer { running.cancel() }
        /// Writes `request` and reads the answer the strap notifies `responseDelay` later.
        func exchange(_ request: H10RecordingRequest) async throws -> PSFTPMessageAssembler.Output {
            let before = link.values(of: mtu).count
            for frame in try request.frames(mtu: 20) { try await h10.write(mtu, value: frame, kind: .command) }
            try #require(await clock.sleepers(atLeast: 2), "the answer is under way beside the frame tick")
            await clock.advance(by: SimulatedPolarSensor.responseDelay, timers: 1)
            var assembler = PSFTPMessageAssembler()
            var index = before
            while true {
                try #require(await link.until { link.values(of: mtu).count > index })
                let output = try assembler.receive(link.values(of: mtu)[index])
                index += 1
                if output != .incomplete { return output }
            }
        }
        #expect(try await exchange(.start(identifier: "fast", sampleType: .heartRate, interval: .oneSecond)) == .message([]))
        // An hour a second: a fifth of a second holds 720 samples, far more than sixteen 20-byte frames can carry.
        await clock.advance(by: .milliseconds(200), timers: 1)
        try #require(Int(await h10.inspect()["recorded_samples"] ?? "0") ?? 0 > 400)
        #expect(try await exchange(.stop) == .message([]))
        let before = link.values(of: mtu).count
        guard case .message(let file) = try await exchange(.fetch(path: "/fast/SAMPLES.BPB")) else {
            Issue.record("no file")
            return
        }
        #expect(link.values(of: mtu).count - before > 16, "more frames than sequence numbers: they wrap after 15")
        #expect(link.values(of: mtu).allSatisfy { $0.count <= 20 })
        #expect(try H10ExerciseSamples.decode(file).heartRates.count > 400)
        #expect(await h10.inspect()["recording"] == "stored")
    }
}
