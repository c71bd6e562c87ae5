import Synchronization
import Testing
import Wear2MQTTTesting
@testable import Wearables

/// The framed vendor channel (GoFIT, ActiGraph) waits for an answer while the answer streams in, and only then: a
/// device that keeps sending something else (frames it sends unasked, answers to another request) while it
/// ignores the request used to keep the request waiting for ever — a sync stalled for the 6-hour command limit.
@Suite("Framed request channel: silence is counted against the awaited answer only")
struct FramedRequestChannelTests {
    static let silence = Duration.milliseconds(300)

    /// A connected simulated ActiGraph Link, its driver not running, on a central whose clock the test moves (the
    /// channel's silence runs on it): the Link gets the requests (and answers nobody), the test plays the notifications.
    func channel(_ clock: ManualClock) async throws -> (DriverHarness, FramedRequestChannel) {
        let harness = DriverHarness(ActiGraphDriver.self, peripheral: try simulated("actigraph_link"),
                                    central: InMemoryCentral(time: clock.timeSource))
        try await harness.central.connect(harness.central.path(of: harness.address))
        let control = try #require(harness.link.characteristic(ActiGraphUUID.control))
        return (harness, FramedRequestChannel(link: harness.link, request: control, peerName: "the device", silenceLimit: Self.silence))
    }

    /// Feeds `segments` one by one, moving the clock `gap` on after each, until `done` says the exchange ended; false
    /// if it had not after 30 s on the clock (the channel's own limit is two silences of 300 ms).
    func feed(_ channel: FramedRequestChannel, _ segments: [[UInt8]], gap: Duration, on clock: ManualClock,
              until done: () -> Bool) async -> Bool {
        let deadline = clock.now + .seconds(30)
        var index = 0
        while !done() {
            guard clock.now < deadline else { return false }
            channel.receive(segments[index % segments.count])
            index += 1
            await clock.advance(by: gap)
        }
        return true
    }

    @Test("segments of other frames, without end, do not hold off the TIMEOUT")
    func unrelatedSegmentsDoNotCountAsAnAnswer() async throws {
        let clock = ManualClock()
        let (harness, channel) = try await channel(clock)
        await withStopping(harness, { _ = await $0.disconnect() }) { harness in
            let exchange = Task { () -> CommandError? in
                do throws(CommandError) { _ = try await channel.exchange(opcode: 0x11, payload: [], name: "a test request") } catch { return error }
                return nil
            }
            // The first segment of a long frame the device sends unasked (opcode 0x05), again and again: each starts a
            // new frame, none ends. Before, every one of them counted as the device still answering.
            let unasked = FrameSegmenter.segments(of: VendorFrame(opcode: 0x05, sequence: 9, payload: Array(repeating: 1, count: 200)).encoded())
            let ended = Flag()
            Task { _ = await exchange.value; ended.set() }
            // The exchange's silence ticker sleeps on the clock before the first segment is fed.
            #expect(await clock.sleepers(atLeast: 1))
            let endedWhileFed = await feed(channel, [unasked[0]], gap: .milliseconds(50), on: clock, until: { ended.isSet })
            #expect(endedWhileFed, "still waiting after 30 s of segments of another frame")
            let error = await exchange.value
            #expect(error?.code == .timeout, "\(String(describing: error))")
        }
    }
}

/// Set once, from any task.
private final class Flag: Sendable {
    private let value = Atomic(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
