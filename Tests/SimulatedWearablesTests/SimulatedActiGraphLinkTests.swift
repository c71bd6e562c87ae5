import Foundation
import Synchronization
import Testing
import Wear2MQTTTesting

@testable import Wearables
@testable import SimulatedWearables

/// A host's view of an `ActiGraphLinkEngine`: requests built with `ActiGraphRequest`, cut into 20-byte segments as
/// the driver writes them, and the Link's answer put back together and decoded with the same codecs.
struct LinkUnderTest {
    /// 2026-11-19 00:00:00 UTC: the end of the simulated epochs, so every range below is fixed.
    static let epochEnd: UInt32 = 1_795_046_400
    static let day = ActiGraphSimulatedEpochs(hours: 24, end: epochEnd, seed: 5)

    var engine: ActiGraphLinkEngine
    var sequence: UInt8 = 0
    var now: UInt32 = LinkUnderTest.epochEnd + 125

    init(epochs: [ActiGraphEpochRecord] = LinkUnderTest.day.records, failingPage: UInt16? = nil) {
        engine = ActiGraphLinkEngine(epochs: epochs, batteryPercent: 77, failingPage: failingPage)
    }

    /// Writes the frame's segments and answers the segments the Link notified.
    mutating func exchange(_ frame: VendorFrame) -> [[UInt8]] {
        FrameSegmenter.segments(of: frame.encoded()).flatMap { engine.receive($0, now: now) }
    }

    /// Sends `request` with the next sequence number, or `sequence` to repeat one; the Link's one response.
    mutating func send(_ request: ActiGraphRequest, sequence repeated: UInt8? = nil) throws -> ActiGraphResponse {
        try send(request.frame(sequence: repeated ?? nextSequence()))
    }

    mutating func send(_ frame: VendorFrame) throws -> ActiGraphResponse {
        try ActiGraphResponse(frame: Self.frame(from: exchange(frame)))
    }

    /// A request of `opcode` with a payload the codec would not build.
    mutating func send(opcode: UInt8, payload: [UInt8]) throws -> VendorFrame {
        try Self.frame(from: exchange(VendorFrame(opcode: opcode, sequence: nextSequence(), payload: payload)))
    }

    mutating func nextSequence() -> UInt8 {
        defer { sequence &+= 1 }
        return sequence
    }

    static func frame(from segments: [[UInt8]]) throws -> VendorFrame {
        #expect(segments.allSatisfy { $0.count <= FrameSegmenter.defaultSegmentSize })
        var reassembler = FrameReassembler()
        let frames = segments.compactMap { reassembler.append($0) }
        try #require(frames.count == 1, "one response, got \(frames.count) frames from \(segments.count) segments")
        return try VendorFrame(decoding: frames[0])
    }

    /// Opens `start…stop` and reads every page; answers the epochs in page order.
    mutating func download(_ start: UInt32, _ stop: UInt32) throws -> (opened: ActiGraphEpochOpened, pages: [ActiGraphEpochPage]) {
        let response = try send(.epochOpen(ActiGraphEpochRange(start: start, stop: stop)))
        try #require(response.status == .ok)
        let opened = try ActiGraphEpochOpened(decoding: response.data)
        let pages = try (0..<opened.pageCount).map { page in
            let answer = try send(.epochPage(page))
            try #require(answer.status == .ok, "page \(page)")
            return try ActiGraphEpochPage(decoding: answer.data)
        }
        return (opened, pages)
    }
}

/// The simulated ActiGraph Link: its protocol engine through whole frames, the stored day of epochs, the motion
/// and stream generators, and the peripheral around them (docs/protocols/actigraph.md, "Simulated Link").
@Suite("Simulated ActiGraph Link")
struct SimulatedActiGraphLinkTests {
    static let control = BluetoothUUID(string: ActiGraphUUID.control)!
    static let controlResponse = BluetoothUUID(string: ActiGraphUUID.controlResponse)!
    static let rawStream = BluetoothUUID(string: ActiGraphUUID.rawStream)!
    static let imuStream = BluetoothUUID(string: ActiGraphUUID.imuStream)!
    static let service = BluetoothUUID(string: ActiGraphUUID.service)!
    static let address = "C0:A6:00:00:00:01"
    static let end = LinkUnderTest.epochEnd
    static let on100 = ActiGraphStreamSettings(rawStreaming: true, rawRateHz: 100, imu: [.gyroscope, .temperature])

    // MARK: STATUS and SET_STREAMS

    @Test("STATUS answers battery, wear, streams, the epochs held and the device time, byte for byte")
    func status() throws {
        var link = LinkUnderTest()
        let response = try link.send(.status)
        #expect(response.opcode == .status && response.status == .ok && response.sequence == 0)
        let status = try ActiGraphDeviceStatus(decoding: response.data)
        #expect(status == ActiGraphDeviceStatus(batteryPercent: 77, isWorn: true, streams: .off,
                                                firstEpoch: Self.end - 86_400, lastEpoch: Self.end - 60,
                                                epochCount: 1440, deviceTime: link.now))

        // Empty Link, battery 50, at 0x6B2E_0D20: the payload as the doc's table lays it out.
        var empty = LinkUnderTest(epochs: [])
        empty.engine.batteryPercent = 50
        empty.now = 0x6B2E_0D20
        let frame = try LinkUnderTest.frame(from: empty.exchange(ActiGraphRequest.status.frame(sequence: 9)))
        #expect(frame.opcode == 0x81 && frame.sequence == 9)
        #expect(frame.payload == [0x80, 50, 0, 0, 100, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x20, 0x0D, 0x2E, 0x6B])
    }

    @Test("SET_STREAMS applies and echoes; a rate outside 30–100 Hz, mask bits above bit 3 or a bad length is 0x8B and changes nothing")
    func setStreams() throws {
        var link = LinkUnderTest()
        let applied = try link.send(.setStreams(Self.on100))
        #expect(applied.status == .ok && applied.data == [1, 100, 0b1010])
        #expect(link.engine.streams == Self.on100)
        let low = ActiGraphStreamSettings(rawStreaming: true, rawRateHz: 30, imu: .all)
        #expect(try link.send(.setStreams(low)).data == low.encoded())
        #expect(try link.send(.setStreams(Self.on100)).status == .ok)

        for payload: [UInt8] in [[1, 29, 0], [1, 101, 0], [1, 50, 0x10], [1, 50, 0xFF], [2, 50, 0], [1, 50], [1, 50, 0, 0]] {
            let refused = try link.send(opcode: ActiGraphOpcode.setStreams.rawValue, payload: payload)
            #expect(refused.opcode == 0x90 && refused.payload == [0x8B], "\(payload)")
        }
        #expect(link.engine.streams == Self.on100)
        #expect(link.engine.counters.streamChanges == 3)
        let status = try ActiGraphDeviceStatus(decoding: link.send(.status).data)
        #expect(status.streams == Self.on100)
    }

    @Test("an unknown opcode and a STATUS with a payload are 0x83 Unrecognized Configuration")
    func unknownOpcode() throws {
        var link = LinkUnderTest()
        let unknown = try link.send(opcode: 0x30, payload: [1, 2])
        #expect(unknown.opcode == 0xB0 && unknown.payload == [0x83])
        let statusWithPayload = try link.send(opcode: ActiGraphOpcode.status.rawValue, payload: [0])
        #expect(statusWithPayload.opcode == 0x81 && statusWithPayload.payload == [0x83])
        #expect(ActiGraphLinkEngine.unrecognizedConfiguration.sdkCode == 3)
        #expect(ActiGraphLinkEngine.unrecognizedConfiguration.commandError?.vendorCode == 3)
    }

    // MARK: Epoch download

    @Test("EPOCH_OPEN answers count and pages of ≤ 60; start after stop or a bad length is 0x88 and keeps the download")
    func epochOpen() throws {
        var link = LinkUnderTest()
        let twoHours = try link.send(.epochOpen(ActiGraphEpochRange(start: Self.end - 3 * 3600, stop: Self.end - 3600 - 1)))
        #expect(try ActiGraphEpochOpened(decoding: twoHours.data) == ActiGraphEpochOpened(epochCount: 120, pageCount: 2))

        let backwards = try link.send(.epochOpen(ActiGraphEpochRange(start: Self.end, stop: Self.end - 1)))
        #expect(backwards.status == ActiGraphLinkEngine.dateFormatError && backwards.status.rawValue == 0x88)
        #expect(backwards.data.isEmpty)
        let short = try link.send(opcode: ActiGraphOpcode.epochOpen.rawValue, payload: [0, 0, 0, 0])
        #expect(short.opcode == 0xA0 && short.payload == [0x88])
        #expect(try link.send(.epochPage(1)).status == .ok, "the two-hour download is still open")

        let all = try ActiGraphEpochOpened(decoding: link.send(.epochOpen(ActiGraphEpochRange(start: 0, stop: .max))).data)
        #expect(all == ActiGraphEpochOpened(epochCount: 1440, pageCount: 24))
        let none = try ActiGraphEpochOpened(decoding: link.send(.epochOpen(ActiGraphEpochRange(start: 1_437_451_500, stop: 1_437_451_560))).data)
        #expect(none == ActiGraphEpochOpened(epochCount: 0, pageCount: 0), "a 2015 range the Link holds nothing of")
        #expect(try link.send(.epochPage(0)).status == ActiGraphLinkEngine.epochDownloadError, "the empty download replaced the old one")
        #expect(link.engine.counters.downloadsOpened == 3)
    }

    @Test("pages cover exactly the range, both ends inclusive, and can be read again")
    func pagesCoverTheRange() throws {
        var link = LinkUnderTest()
        let start = Self.end - 3 * 3600
        let stop = Self.end - 3600 - 1
        let (opened, pages) = try link.download(start, stop)
        #expect(opened.pageCount == 2)
        #expect(pages.map(\.page) == [0, 1] && pages.map(\.records.count) == [60, 60])
        let times = pages.flatMap(\.records).map(\.timestamp)
        #expect(times == Array(stride(from: start, through: Self.end - 3600 - 60, by: 60)))
        #expect(pages.flatMap(\.records) == LinkUnderTest.day.records.filter { (start...stop).contains($0.timestamp) })

        // Boundaries: an epoch whose ts equals start or stop is in; a range between two epochs holds none.
        let epoch = Self.end - 600
        #expect(try link.download(epoch, epoch).pages.flatMap(\.records).map(\.timestamp) == [epoch])
        #expect(try link.download(epoch + 1, epoch + 59).opened == ActiGraphEpochOpened(epochCount: 0, pageCount: 0))
        #expect(try link.download(epoch, epoch + 60).pages.flatMap(\.records).map(\.timestamp) == [epoch, epoch + 60])
        let sixtyOne = try link.download(epoch - 60 * 60, epoch)
        #expect(sixtyOne.opened == ActiGraphEpochOpened(epochCount: 61, pageCount: 2))
        #expect(sixtyOne.pages.map(\.records.count) == [60, 1])

        let first = try link.send(.epochPage(0))
        let again = try link.send(.epochPage(0))
        #expect(first.data == again.data && first.status == .ok)
    }

    @Test("EPOCH_PAGE outside the download, with none open, or of a bad length is 0x87")
    func epochPageErrors() throws {
        var link = LinkUnderTest()
        #expect(try link.send(.epochPage(0)).status.rawValue == 0x87, "no download open")
        _ = try link.download(Self.end - 7200, Self.end - 1)
        #expect(try link.send(.epochPage(2)).status == ActiGraphLinkEngine.epochDownloadError)
        #expect(try link.send(.epochPage(.max)).status == ActiGraphLinkEngine.epochDownloadError)
        let long = try link.send(opcode: ActiGraphOpcode.epochPage.rawValue, payload: [0, 0, 0])
        #expect(long.opcode == 0xA1 && long.payload == [0x87])
        #expect(link.engine.counters.epochPagesServed == 2)
    }

    @Test("EPOCH_ACK goes in order; out of order, outside or without a download is 0x87; acked epochs stay on the Link")
    func epochAck() throws {
        var link = LinkUnderTest()
        #expect(try link.send(.epochAck(0)).status == ActiGraphLinkEngine.epochDownloadError, "no download open")
        _ = try link.download(Self.end - 7200, Self.end - 1)
        #expect(try link.send(.epochAck(1)).status == ActiGraphLinkEngine.epochDownloadError, "page 0 first")
        let acked = try link.send(.epochAck(0))
        #expect(acked.status == .ok && acked.data.isEmpty)
        #expect(try link.send(.epochAck(0)).status == ActiGraphLinkEngine.epochDownloadError, "page 0 again")
        #expect(try link.send(.epochAck(1)).status == .ok)
        #expect(try link.send(.epochAck(2)).status == ActiGraphLinkEngine.epochDownloadError, "beyond the last page")
        let short = try link.send(opcode: ActiGraphOpcode.epochAck.rawValue, payload: [1])
        #expect(short.opcode == 0xA2 && short.payload == [0x87])
        #expect(link.engine.counters.epochAcks == 2)

        #expect(link.engine.epochCount == 1440)
        #expect(try link.download(Self.end - 7200, Self.end - 1).opened.epochCount == 120, "the same epochs again")
        #expect(try ActiGraphDeviceStatus(decoding: link.send(.status).data).epochCount == 1440)
    }

    @Test("fail_page answers 0x86 Wireless Transfer Error once for that page; read again, it is served")
    func failingPage() throws {
        var link = LinkUnderTest(failingPage: 1)
        _ = try link.send(.epochOpen(ActiGraphEpochRange(start: Self.end - 7200, stop: Self.end - 1)))
        #expect(try link.send(.epochPage(0)).status == .ok)
        let failed = try link.send(.epochPage(1))
        #expect(failed.status == ActiGraphLinkEngine.wirelessTransferError && failed.status.rawValue == 0x86)
        #expect(failed.status.commandError?.vendorCode == 6)
        #expect(try link.send(.epochAck(1)).status == ActiGraphLinkEngine.epochDownloadError)
        #expect(try link.send(.epochPage(1)).status == .ok)
        #expect(link.engine.failingPage == nil)
        #expect(link.engine.counters.pageFailures == 1 && link.engine.counters.epochPagesServed == 2)
    }

    // MARK: Frames

    @Test("a repeated sequence number is answered from the cache without running again")
    func retransmission() throws {
        var link = LinkUnderTest()
        _ = try link.download(Self.end - 7200, Self.end - 1)
        let ack = ActiGraphRequest.epochAck(0).frame(sequence: 40)
        let first = link.exchange(ack)
        let second = link.exchange(ack)
        #expect(first == second && !first.isEmpty)
        #expect(try ActiGraphResponse(frame: LinkUnderTest.frame(from: second)).status == .ok,
                "the cached OK, not 0x87 for acknowledging page 0 twice")
        #expect(link.engine.counters.epochAcks == 1)
        #expect(link.engine.frames.retransmissionsAnswered == 1)
        // The cache knows only opcode and sequence: another page acknowledged under the same number is the old
        // answer again, and nothing runs.
        #expect(try link.send(.epochAck(1), sequence: 40).status == .ok)
        #expect(link.engine.counters.epochAcks == 1 && link.engine.frames.retransmissionsAnswered == 2)
        // The same number with another opcode is a new request.
        #expect(try link.send(.epochPage(1), sequence: 40).status == .ok)
        #expect(try link.send(.epochAck(1), sequence: 41).status == .ok)
        #expect(link.engine.counters.epochAcks == 2)
        let streams = ActiGraphRequest.setStreams(Self.on100).frame(sequence: 42)
        #expect(link.exchange(streams) == link.exchange(streams))
        #expect(link.engine.counters.streamChanges == 1)
    }

    @Test("malformed frames and stray segments are dropped unanswered and counted; responses are not requests")
    func malformedFrames() throws {
        var link = LinkUnderTest()
        var corrupt = ActiGraphRequest.status.frame(sequence: 9).encoded()
        corrupt[corrupt.count - 1] ^= 0xFF
        #expect(link.engine.receive([0x80] + corrupt, now: link.now).isEmpty)
        var badLength = ActiGraphRequest.epochPage(0).frame(sequence: 9).encoded()
        badLength[2] = 5
        #expect(link.engine.receive([0x80] + badLength, now: link.now).isEmpty)
        #expect(link.engine.receive([0x03, 0x01], now: link.now).isEmpty, "a segment out of order")
        #expect(link.engine.frames.malformedFrames == 3)
        #expect(link.engine.frames.requests == 0)
        #expect(link.exchange(VendorFrame(opcode: 0x81, sequence: 4, payload: [0x80])).isEmpty, "a response is not a request")
        #expect(try link.send(.status, sequence: 9).status == .ok, "the retransmission of the mangled request is answered")
    }

    @Test("the link going stops the streams and closes the download; the epochs stay")
    func connectionEnded() throws {
        var link = LinkUnderTest()
        #expect(try link.send(.setStreams(Self.on100)).status == .ok)
        _ = try link.download(Self.end - 7200, Self.end - 1)
        link.engine.connectionEnded()
        #expect(link.engine.streams == .off && !link.engine.isDownloadOpen)
        #expect(try link.send(.epochPage(0)).status == ActiGraphLinkEngine.epochDownloadError)
        #expect(try ActiGraphDeviceStatus(decoding: link.send(.status).data).epochCount == 1440)
    }

    // MARK: The day of epochs

    @Test("a day of epochs: asleep at night with low counts, two walks with steps, a stretch not worn, sedentary otherwise")
    func epochDay() throws {
        let day = LinkUnderTest.day
        #expect(day.records.count == 1440 && day.start == Self.end - 86_400 && day.end == Self.end)
        #expect(zip(day.records, day.records.dropFirst()).allSatisfy { $1.timestamp - $0.timestamp == 60 })
        func hour(_ record: ActiGraphEpochRecord) -> Double { Double(record.timestamp % 86_400) / 3600 }
        func counts(_ record: ActiGraphEpochRecord) -> [UInt16] { [record.xCounts, record.yCounts, record.zCounts] }

        let night = day.records.filter { (1.0..<6.0).contains(hour($0)) }
        #expect(night.count == 300)
        #expect(night.allSatisfy { counts($0).allSatisfy { $0 <= 50 } && $0.steps == 0 && $0.isWorn })
        #expect(night.allSatisfy { (50...60).contains($0.heartRate) })

        let walking = day.records.filter { $0.steps >= 90 }
        #expect(walking.count >= 55, "two walks of 25–50 minutes")
        #expect(walking.allSatisfy { counts($0).allSatisfy { (1500...5000).contains($0) } && $0.steps <= 125 })
        #expect(walking.allSatisfy { (95...125).contains($0.heartRate) && $0.isWorn })
        #expect(walking.contains { (7.0..<9.0).contains(hour($0)) } && walking.contains { (17.5..<20.0).contains(hour($0)) })
        #expect(walking.allSatisfy { ActiGraphSimulatedEpochs.activity(at: $0.timestamp, seed: 5) == .walking })

        let notWorn = day.records.filter { !$0.isWorn }
        #expect(notWorn.count >= 40)
        #expect(zip(notWorn, notWorn.dropFirst()).allSatisfy { $1.timestamp - $0.timestamp == 60 }, "one stretch")
        #expect(notWorn.allSatisfy { counts($0) == [0, 0, 0] && $0.steps == 0 && $0.heartRate == 0 })
        #expect(notWorn.allSatisfy { (18.5..<22.0).contains(hour($0)) })

        let sedentary = day.records.filter { (10.0..<17.0).contains(hour($0)) }
        #expect(sedentary.allSatisfy { counts($0).allSatisfy { $0 <= 600 } && (65...85).contains($0.heartRate) })
        #expect(sedentary.contains { $0.steps > 0 } && sedentary.allSatisfy { $0.steps <= 20 })
        #expect(day.records.last?.isWorn == true, "asleep at midnight: STATUS reports the Link worn")
    }

    @Test("the epochs are deterministic for a seed, differ between seeds, and agree where windows overlap")
    func epochDeterminism() {
        let end = Self.end + 7 * 3600 + 59
        #expect(ActiGraphSimulatedEpochs(hours: 24, end: end, seed: 9) == ActiGraphSimulatedEpochs(hours: 24, end: end, seed: 9))
        #expect(ActiGraphSimulatedEpochs(hours: 24, end: end, seed: 9).records != ActiGraphSimulatedEpochs(hours: 24, end: end, seed: 10).records)
        let week = ActiGraphSimulatedEpochs(hours: 168, end: end, seed: 9)
        #expect(week.records.count == 168 * 60 && week.end == Self.end + 7 * 3600, "the end rounded down to the minute")
        #expect(Array(week.records.suffix(1440)) == ActiGraphSimulatedEpochs(hours: 24, end: end, seed: 9).records)
        #expect(ActiGraphSimulatedEpochs(hours: 0, end: end, seed: 9).records.isEmpty)
        #expect(week.records.filter { !$0.isWorn }.count >= 7 * 40, "a stretch not worn every day")
    }

    // MARK: Motion

    /// `seconds` of acceleration at `rate` from `start` (Unix s).
    static func accelerations(_ activity: ActiGraphSimulatedActivity, from start: Double, seconds: Double, rate: Double = 100)
        -> [ActiGraphVector]
    {
        var motion = ActiGraphWristMotion(activity: activity, seed: 3)
        return (0..<Int(seconds * rate)).map { motion.acceleration(atUnixSeconds: start + Double($0) / rate) }
    }

    /// The frequency in `band` with the most power in `values` sampled at `rate` (a plain DFT, 0.02 Hz steps).
    static func dominantFrequency(_ values: [Double], rate: Double, band: ClosedRange<Double>) -> Double {
        let mean = values.reduce(0, +) / Double(values.count)
        func power(_ frequency: Double) -> Double {
            var re = 0.0
            var im = 0.0
            for (index, value) in values.enumerated() {
                let angle = 2 * Double.pi * frequency * Double(index) / rate
                re += (value - mean) * cos(angle)
                im -= (value - mean) * sin(angle)
            }
            return re * re + im * im
        }
        let candidates = stride(from: band.lowerBound, through: band.upperBound, by: 0.02).map { ($0, power($0)) }
        return candidates.max { $0.1 < $1.1 }?.0 ?? 0
    }

    @Test("walking oscillates at the step frequency, vertically by 0.3–0.5 g around a mean magnitude of about 1 g")
    func walkingMotion() {
        let samples = Self.accelerations(.walking, from: Double(Self.end) + 0.5, seconds: 20)
        let vertical = samples.map(\.y)
        let step = Self.dominantFrequency(vertical, rate: 100, band: 0.3...6)
        #expect(ActiGraphWristMotion.cadenceRange.contains(step), "step frequency \(step) Hz")
        let stride = Self.dominantFrequency(samples.map(\.x), rate: 100, band: 0.3...6)
        #expect((0.85...1.05).contains(stride), "the lateral sway once per stride, \(stride) Hz")
        let meanMagnitude = samples.map(\.magnitude).reduce(0, +) / Double(samples.count)
        #expect((0.95...1.12).contains(meanMagnitude), "mean magnitude \(meanMagnitude) g")
        let swing = ((vertical.max() ?? 0) - (vertical.min() ?? 0)) / 2
        #expect((0.3...0.65).contains(swing), "vertical amplitude \(swing) g, noise included")
    }

    @Test("resting is gravity on y with a slight tilt and ±0.01 g of noise; alternating walks on even minutes")
    func restingMotion() {
        let samples = Self.accelerations(.resting, from: Double(Self.end) + 60, seconds: 30)
        for axis in [\ActiGraphVector.x, \.y, \.z] {
            let values = samples.map { $0[keyPath: axis] }
            #expect((values.max() ?? 0) - (values.min() ?? 0) <= 0.021)
        }
        #expect(samples.allSatisfy { abs($0.magnitude - 1) < 0.02 && $0.y > 0.95 })
        #expect(samples.allSatisfy { ($0.x * $0.x + $0.z * $0.z).squareRoot() > 0.04 }, "tilted by 3–10° on two axes")

        let alternating = ActiGraphSimulatedActivity.alternating
        #expect(alternating.isWalking(atUnixSeconds: Double(Self.end) + 59.9))
        #expect(!alternating.isWalking(atUnixSeconds: Double(Self.end) + 60))
        #expect(alternating.isWalking(atUnixSeconds: Double(Self.end) + 120))
        let mixed = Self.accelerations(.alternating, from: Double(Self.end) + 30, seconds: 60)
        let walkingHalf = mixed.prefix(3000).map(\.y)
        let restingHalf = mixed.suffix(3000).map(\.y)
        #expect((walkingHalf.max() ?? 0) - (walkingHalf.min() ?? 0) > 0.5)
        #expect((restingHalf.max() ?? 0) - (restingHalf.min() ?? 0) <= 0.021)
    }

    // MARK: Stream packets

    @Test("raw packets carry contiguous sample times at the configured rate, without drift, sequence numbers in order")
    func rawPacketTimes() throws {
        let start: Int64 = Int64(Self.end) * 1000 + 123
        var generator = ActiGraphRawStreamGenerator(
            schedule: ActiGraphSampleSchedule(rateHz: 100, startMilliseconds: start), mtu: 23,
            motion: ActiGraphWristMotion(activity: .alternating, seed: 1))
        let packets = generator.packets(by: .seconds(3))
        #expect(packets.count == 301, "samples 0 through 300 are due at 3 s")
        let decoded = try packets.map { try ActiGraphRawPacket(decoding: $0.encoded()) }
        #expect(decoded.map(\.sequence) == (0...300).map(UInt16.init))
        #expect(decoded.allSatisfy { $0.samples.count == 1 && $0.rateHz == 100 && $0.encoded().count <= 20 })
        let times = decoded.flatMap(\.accelerations).map(\.timestamp)
        #expect(times == (0...300).map { start + Int64($0) * 10 })
        #expect(decoded.flatMap(\.accelerations).allSatisfy { (0.3...3).contains(($0.x * $0.x + $0.y * $0.y + $0.z * $0.z).squareRoot()) })
        #expect(generator.packets(by: .seconds(3)).isEmpty, "nothing twice")
        #expect(generator.packets(by: .milliseconds(3010)).count == 1)

        // 30 Hz for 30 s: each stamp is the start + i/30 s rounded, so the last is exactly 30 s on.
        var slow = ActiGraphRawStreamGenerator(schedule: ActiGraphSampleSchedule(rateHz: 30, startMilliseconds: start),
                                               mtu: 23, motion: ActiGraphWristMotion(activity: .walking, seed: 1))
        let slowTimes = slow.packets(by: .seconds(30)).flatMap(\.accelerations).map(\.timestamp)
        #expect(slowTimes.count == 901 && slowTimes.last == start + 30_000)
        #expect(slowTimes.enumerated().allSatisfy { $1 == start + (Int64($0) * 1000 + 15) / 30 })
        #expect(zip(slowTimes, slowTimes.dropFirst()).allSatisfy { (33...34).contains($1 - $0) })
    }

    @Test("samples per packet are as many as fit in mtu − 3 bytes, 1 at the default MTU, at most 40")
    func samplesPerPacket() throws {
        let sizes = [23: 1, 29: 2, 100: 14, 185: 28, 247: 39, 263: 40, 517: 40]
        for (mtu, expected) in sizes {
            #expect(ActiGraphRawStreamGenerator.samplesPerPacket(mtu: mtu) == expected, "MTU \(mtu)")
            var generator = ActiGraphRawStreamGenerator(
                schedule: ActiGraphSampleSchedule(rateHz: 100, startMilliseconds: 1_000_000), mtu: mtu,
                motion: ActiGraphWristMotion(activity: .walking, seed: 2))
            let packet = generator.nextPacket()
            #expect(packet.samples.count == expected && packet.encoded().count <= mtu - 3)
        }
        // A full packet waits for its last sample, then the stamps run on across packets.
        var large = ActiGraphRawStreamGenerator(schedule: ActiGraphSampleSchedule(rateHz: 100, startMilliseconds: 5_000),
                                                mtu: 247, motion: ActiGraphWristMotion(activity: .walking, seed: 2))
        #expect(large.packets(by: .milliseconds(379)).isEmpty, "38 samples due, 39 needed")
        let packets = large.packets(by: .seconds(1))
        #expect(packets.count == 2 && large.samplesGenerated == 78)
        #expect(packets.flatMap(\.accelerations).map(\.timestamp) == (0..<78).map { 5_000 + Int64($0) * 10 })

        #expect(ActiGraphIMUStreamGenerator.samplesPerPacket(sensor: .gyroscope, mtu: 23) == 1)
        #expect(ActiGraphIMUStreamGenerator.samplesPerPacket(sensor: .magnetometer, mtu: 247) == 38)
        #expect(ActiGraphIMUStreamGenerator.samplesPerPacket(sensor: .temperature, mtu: 247) == 1)
    }

    @Test("IMU packets come only for the sensors in the mask, at 50 Hz (temperature 1 Hz, 31–33 °C)")
    func imuPackets() throws {
        var streams = ActiGraphLinkStreams(mtu: 23, activity: .walking, seed: 4)
        let start = Int64(Self.end) * 1000
        streams.apply(ActiGraphStreamSettings(rawStreaming: false, rawRateHz: 100, imu: [.gyroscope, .temperature]),
                      elapsed: .zero, unixMilliseconds: start)
        let due = streams.packets(by: .seconds(2))
        #expect(due.raw.isEmpty)
        let decoded = try due.imu.map { try ActiGraphIMUPacket(decoding: $0.encoded()) }
        #expect(Set(decoded.map(\.sensor)) == [.gyroscope, .temperature])
        #expect(decoded.allSatisfy { $0.encoded().count <= 20 })
        let gyroscope = decoded.filter { $0.sensor == .gyroscope }
        #expect(gyroscope.count == 101 && gyroscope.allSatisfy { $0.rateHz == 50 })
        #expect(gyroscope.map(\.sequence) == (0...100).map(UInt16.init))
        #expect(gyroscope.flatMap(\.measurements).map(\.timestamp) == (0...100).map { start + Int64($0) * 20 })
        #expect(gyroscope.flatMap(\.measurements).contains { abs($0.values[0]) > 40 }, "the arm swings while walking")
        let temperature = decoded.filter { $0.sensor == .temperature }.flatMap(\.measurements)
        #expect(temperature.map(\.timestamp) == [start, start + 1000, start + 2000])
        #expect(temperature.allSatisfy { (31...33).contains($0.values[0]) })

        // The accelerometer and magnetometer join; the gyroscope leaves; the temperature carries on.
        streams.apply(ActiGraphStreamSettings(rawStreaming: false, rawRateHz: 100, imu: [.accelerometer, .magnetometer, .temperature]),
                      elapsed: .seconds(2), unixMilliseconds: start + 2000)
        let next = try streams.packets(by: .seconds(3)).imu.map { try ActiGraphIMUPacket(decoding: $0.encoded()) }
        #expect(Set(next.map(\.sensor)) == [.accelerometer, .magnetometer, .temperature])
        let field = try #require(next.first { $0.sensor == .magnetometer }?.measurements.first?.values)
        let strength = field.map { $0 * $0 }.reduce(0, +).squareRoot()
        #expect((40...52).contains(strength), "the Earth's field, \(strength) µT")
        let accelerometer = next.filter { $0.sensor == .accelerometer }.flatMap(\.measurements)
        #expect(accelerometer.count == 51 && accelerometer.allSatisfy { abs($0.values[1]) < 2 })
        #expect(next.filter { $0.sensor == .temperature }.map(\.sequence) == [3], "sequence numbers run on")
    }

    @Test("raw streaming restarts only when switched on or its rate changes; sequence numbers run on per connection")
    func rawRestarts() {
        var streams = ActiGraphLinkStreams(mtu: 23, activity: .resting, seed: 4)
        streams.apply(ActiGraphStreamSettings(rawStreaming: true, rawRateHz: 50, imu: []), elapsed: .zero, unixMilliseconds: 10_000)
        #expect(streams.packets(by: .milliseconds(990)).raw.count == 50)
        streams.apply(ActiGraphStreamSettings(rawStreaming: true, rawRateHz: 50, imu: [.temperature]),
                      elapsed: .seconds(1), unixMilliseconds: 99_999)
        let carriedOn = streams.packets(by: .seconds(2)).raw
        #expect(carriedOn.first?.sequence == 50 && carriedOn.first?.accelerations.first?.timestamp == 11_000,
                "an IMU change leaves the raw stream's clock alone")
        streams.apply(.off, elapsed: .seconds(2), unixMilliseconds: 12_000)
        #expect(streams.isIdle && streams.packets(by: .seconds(10)).raw.isEmpty)
        streams.apply(ActiGraphStreamSettings(rawStreaming: true, rawRateHz: 100, imu: []), elapsed: .seconds(10), unixMilliseconds: 20_000)
        let restarted = streams.packets(by: .seconds(10)).raw
        #expect(restarted.map(\.sequence) == [101] && restarted.first?.accelerations.first?.timestamp == 20_000)
        var wrapping = ActiGraphRawStreamGenerator(schedule: ActiGraphSampleSchedule(rateHz: 30, startMilliseconds: 0), mtu: 23,
                                                   sequence: .max, motion: ActiGraphWristMotion(activity: .resting, seed: 1))
        #expect([wrapping.nextPacket().sequence, wrapping.nextPacket().sequence] == [.max, 0])
    }

    @Test("samples fall due one per 1 / rate from the start, so a late tick loses none")
    func sampleSchedule() {
        let schedule = ActiGraphSampleSchedule(rateHz: 100, startMilliseconds: 0, startElapsed: .seconds(5))
        #expect(schedule.samplesDue(by: .seconds(4)) == 0)
        #expect(schedule.samplesDue(by: .seconds(5)) == 1)
        #expect(schedule.samplesDue(by: .seconds(5) + .microseconds(9_999)) == 1)
        #expect(schedule.samplesDue(by: .seconds(5) + .milliseconds(10)) == 2)
        #expect(schedule.samplesDue(by: .seconds(35)) == 3001)
        #expect(ActiGraphSampleSchedule(rateHz: 30, startMilliseconds: 0).samplesDue(by: .seconds(1)) == 31)
    }

    // MARK: The peripheral

    /// The clock the Link of a test runs on: its stream tick, its battery, its own clock.
    let clock = ManualClock()
    /// The stream tick and the battery.
    static let timers = 2

    func device(_ options: [String: SimulationOptionValue] = [:], address: String? = address) throws -> SimulatedActiGraphLink {
        try SimulatedActiGraphLink(clocked(seed: 21, options: ["epoch_end": .int(Int(Self.end))].merging(options) { $1 },
                                           address: address, clock: clock))
    }

    @Test("registered as actigraph_link; advertises its serial and the vendor service; the GATT table of the doc")
    func table() async throws {
        let kind = try #require(SimulatedDeviceCatalog.kind(named: "actigraph_link"))
        let made = try kind.make(SimulatedDeviceConfiguration(seed: 1, address: Self.address))
        #expect(made.advertisement.localName == "TAS1D00000001" && made.deviceName == "TAS1D00000001")
        #expect(made.advertisement.serviceUUIDs == [Self.service])
        func flags(_ service: BluetoothUUID) -> [BluetoothUUID: CharacteristicFlags] {
            let found = made.services.first { $0.uuid == service }
            return Dictionary(uniqueKeysWithValues: (found?.characteristics ?? []).map { ($0.uuid, $0.flags) })
        }
        #expect(flags(Self.service) == [Self.control: [.write, .writeWithoutResponse], Self.controlResponse: .notify,
                                        Self.rawStream: .notify, Self.imuStream: .notify])
        #expect(flags(BluetoothUUID(0x180F)) == [BluetoothUUID(0x2A19): [.read, .notify]])
        #expect(flags(BluetoothUUID(0x1805)) == [BluetoothUUID(0x2A2B): [.read, .write]])

        let link = try device()
        func string(_ uuid: UInt16) async throws -> String { try DeviceInformationString.decode(await link.read(BluetoothUUID(uuid))) }
        #expect(try await string(0x2A29) == "ActiGraph")
        #expect(try await string(0x2A24) == "GT9X Link")
        #expect(try await string(0x2A25) == "TAS1D00000001")
        #expect(try await string(0x2A26) == "1.7.2")
        #expect(try await string(0x2A27) == "4.0")
        #expect(SimulatedActiGraphLink.serial(address: "AA:BB:CC:12:34:56", seed: 0) == "TAS1D" + String(0xCC12_3456 % 100_000_000))
        #expect(SimulatedActiGraphLink.serial(address: nil, seed: 42) == "TAS1D00000042")
        let serial = SimulatedActiGraphLink.serial(address: Self.address, seed: 0)
        #expect(serial.count == 13 && serial.hasPrefix("TAS") && serial.allSatisfy { $0.isNumber || $0.isUppercase },
                "the name pattern a host matches: TAS and 10 capitals or digits")
        #expect(try BatteryLevel.decode(await link.read(BluetoothUUID(0x2A19))).percent == 88)
        await #expect(throws: ATTError.readNotPermitted) { try await link.read(Self.control) }
        let seen = await link.inspect()
        #expect(seen["serial"] == "TAS1D00000001" && seen["epochs"] == "1440" && seen["raw_streaming"] == "false")
        #expect(seen["wear"] == "true" && seen["battery"] == "88" && seen["imu_mask"] == "0" && seen["raw_rate_hz"] == "100")
        for bad: [String: SimulationOptionValue] in [["epoch_hours": .int(169)], ["activity": .string("running")],
                                                      ["fail_page": .int(-2)], ["wear": .bool(true)]] {
            #expect(throws: SimulatedDeviceConfigurationError.self) { try self.device(bad) }
        }
        let twoHours = try device(["epoch_hours": .int(2)])
        #expect(await twoHours.inspect()["epochs"] == "120")
    }

    /// Writes `request`'s segments to Control and waits for its response on Control Response.
    func send(_ request: ActiGraphRequest, sequence: UInt8, to device: SimulatedActiGraphLink, over link: RecordingPeripheralLink)
        async throws -> ActiGraphResponse
    {
        let before = link.values(of: Self.controlResponse).count
        for segment in FrameSegmenter.segments(of: request.frame(sequence: sequence).encoded()) {
            try await device.write(Self.control, value: segment, kind: .request)
        }
        var response: ActiGraphResponse?
        _ = await link.until {
            var reassembler = FrameReassembler()
            response = link.values(of: Self.controlResponse).dropFirst(before).compactMap { reassembler.append($0) }.first
                .flatMap { try? ActiGraphResponse(frame: VendorFrame(decoding: $0)) }
            return response != nil
        }
        return try #require(response)
    }

    @Test("over GATT: SET_STREAMS starts raw and IMU notifications at 100 Hz, counted in inspect(); off stops them")
    func streamingOverGATT() async throws {
        let device = try device()
        let link = RecordingPeripheralLink()
        let running = try await run(device, on: link, clock: clock, timers: Self.timers)
        defer { running.cancel() }

        let status = try ActiGraphDeviceStatus(decoding: await send(.status, sequence: 0, to: device, over: link).data)
        #expect(status.epochCount == 1440 && status.lastEpoch == Self.end - 60 && status.streams == .off)
        let echoed = try await send(.setStreams(Self.on100), sequence: 1, to: device, over: link)
        #expect(echoed.status == .ok && echoed.data == Self.on100.encoded())
        await clock.advance(by: .seconds(1), timers: Self.timers)
        // A second at 100 Hz is samples 0…100, one a packet at this MTU; the gyroscope's 0…50 and two temperatures.
        #expect(link.values(of: Self.rawStream).count == 101 && link.values(of: Self.imuStream).count == 51 + 2)
        let during = await device.inspect()
        #expect(during["raw_streaming"] == "true" && during["raw_rate_hz"] == "100" && during["imu_mask"] == "10")

        let stopped = try await send(.setStreams(.off), sequence: 2, to: device, over: link)
        #expect(stopped.status == .ok)
        let after = await device.inspect()
        let sent = try #require(Int(after["raw_samples_sent"] ?? ""))
        let imuSent = try #require(Int(after["imu_packets_sent"] ?? ""))
        #expect(link.values(of: Self.rawStream).count == sent && link.values(of: Self.imuStream).count == imuSent,
                "every packet counted has reached the central")
        let raw = try link.values(of: Self.rawStream).map { try ActiGraphRawPacket(decoding: $0) }
        #expect(raw.map(\.sequence) == (0..<sent).map { UInt16($0) })
        let times = raw.flatMap(\.accelerations).map(\.timestamp)
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 == 10 }, "the Link's own 100 Hz stamps, without gaps")
        let imu = try link.values(of: Self.imuStream).map { try ActiGraphIMUPacket(decoding: $0) }
        #expect(Set(imu.map(\.sensor)).isSubset(of: [.gyroscope, .temperature]) && imu.contains { $0.sensor == .gyroscope })
        #expect(after["raw_streaming"] == "false")

        // Cut the link: a new connection starts with the streams off.
        running.cancel()
        await running.value
        #expect(await !device.isConnected)
        #expect(await device.inspect()["raw_streaming"] == "false")
    }

    @Test("a stream nobody subscribed to is not sent: the IMU arrives, the raw stream made alongside it does not")
    func unsubscribedStreamsAreDropped() async throws {
        let device = try device()
        let link = RecordingPeripheralLink(unsubscribed: [Self.rawStream])
        let running = try await run(device, on: link, clock: clock, timers: Self.timers)
        defer { running.cancel() }
        let settings = ActiGraphStreamSettings(rawStreaming: true, rawRateHz: 100, imu: [.accelerometer])
        #expect(try await send(.setStreams(settings), sequence: 0, to: device, over: link).status == .ok)
        await clock.advance(by: .milliseconds(500), timers: Self.timers)
        #expect(link.values(of: Self.imuStream).count == 26, "samples 0…25 at 50 Hz")
        #expect(link.values(of: Self.rawStream).isEmpty)
        #expect(await device.inspect()["raw_samples_sent"] == "0")
    }

    @Test("drop_after_pages hangs up once, right after that many EPOCH_PAGE answers; lose_responses needs a retransmission")
    func dropAndLoss() async throws {
        let device = try device(["epoch_hours": .int(3), "drop_after_pages": .int(1), "lose_responses": .int(1)])
        let link = RecordingPeripheralLink(mtu: 247)
        let running = try await run(device, on: link, clock: clock, timers: Self.timers)
        defer { running.cancel() }

        // The first answer is lost; the retransmission with the same sequence number is answered from the cache.
        for segment in FrameSegmenter.segments(of: ActiGraphRequest.status.frame(sequence: 0).encoded()) {
            try await device.write(Self.control, value: segment, kind: .request)
        }
        #expect(try await send(.status, sequence: 0, to: device, over: link).status == .ok)
        var reassembler = FrameReassembler()
        #expect(link.values(of: Self.controlResponse).compactMap { reassembler.append($0) }.count == 1, "one answer reached the host")
        #expect(await device.inspect()["retransmissions_answered"] == "1")

        let range = ActiGraphEpochRange(start: Self.end - 3 * 3600, stop: Self.end - 1)
        #expect(try await send(.epochOpen(range), sequence: 1, to: device, over: link).status == .ok)
        #expect(try await send(.epochPage(0), sequence: 2, to: device, over: link).status == .ok)
        #expect(await link.until { link.hangUps == 1 })

        // The host reconnects and reads on: the Link does not hang up again.
        running.cancel()
        await running.value
        #expect(await !device.isConnected)
        let again = try await run(device, on: link, clock: clock, timers: Self.timers)
        defer { again.cancel() }
        #expect(try await send(.epochPage(0), sequence: 0, to: device, over: link).status == ActiGraphLinkEngine.epochDownloadError,
                "the download went with the link")
        #expect(try await send(.epochOpen(range), sequence: 1, to: device, over: link).status == .ok)
        for page in UInt16(0)..<3 {
            #expect(try await send(.epochPage(page), sequence: UInt8(2 + page * 2), to: device, over: link).status == .ok)
            #expect(try await send(.epochAck(page), sequence: UInt8(3 + page * 2), to: device, over: link).status == .ok)
        }
        let seen = await device.inspect()
        #expect(seen["epoch_pages_served"] == "4" && seen["epoch_acks"] == "3" && seen["epochs"] == "180")
        #expect(link.hangUps == 1, "once")
    }

    @Test("Current Time answers the time written, advanced; a bad length is ATT 0x0D")
    func currentTime() async throws {
        let device = try device()
        let before = try CurrentTime.decode(await device.read(BluetoothUUID(0x2A2B)))
        #expect(before.dateTime.year >= 2025, "the simulation's clock before any write")
        let written = try CurrentTime(year: 2026, month: 11, day: 19, hours: 8, minutes: 30, seconds: 0, dayOfWeek: 4,
                                      adjustReason: [.manualTimeUpdate])
        try await device.write(BluetoothUUID(0x2A2B), value: written.encode(), kind: .request)
        #expect(try CurrentTime.decode(await device.read(BluetoothUUID(0x2A2B))) == written, "no time has passed")
        await clock.advance(by: .seconds(75))
        let read = try CurrentTime.decode(await device.read(BluetoothUUID(0x2A2B)))
        // Advanced by the time that passed: 8:30:00 and 75 s.
        let advanced = (read.dateTime.hours - 8) * 3600 + (read.dateTime.minutes - 30) * 60 + read.dateTime.seconds
        #expect(read.dateTime.year == 2026 && read.dateTime.day == 19 && advanced == 75)
        #expect(read.adjustReason == [.manualTimeUpdate])
        await #expect(throws: ATTError.invalidAttributeValueLength) {
            try await device.write(BluetoothUUID(0x2A2B), value: [1, 2, 3], kind: .request)
        }
        await #expect(throws: ATTError.writeNotPermitted) {
            try await device.write(Self.rawStream, value: [1], kind: .request)
        }
    }
}
