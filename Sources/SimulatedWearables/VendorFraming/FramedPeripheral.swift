import EventLoop
import Wearables

/// The simulated side of a framed vendor service (the GoFIT band, the ActiGraph Link): what their engines and
/// peripherals share around `FramedResponder`.

/// A device engine that answers request frames: `receive` and `respond` wrap its `execute` in the shared
/// reassembly, retransmission cache and segmenting.
protocol FramedDeviceEngine {
    var frames: FramedResponder { get set }
    /// Runs one request (never a retransmission) at the device's clock `now` and answers its response frame.
    mutating func execute(_ frame: VendorFrame, now: UInt32) -> VendorFrame
}

extension FramedDeviceEngine {
    /// One segment written to the request characteristic; answers the segments to notify (none until a frame is
    /// complete, none for a malformed frame).
    mutating func receive(_ segment: [UInt8], now: UInt32) -> [[UInt8]] {
        var frames = self.frames
        defer { self.frames = frames }
        return frames.receive(segment) { execute($0, now: now) }
    }

    /// The response to one well-formed frame; nil when it is not a request.
    mutating func respond(to frame: VendorFrame, now: UInt32) -> VendorFrame? {
        var frames = self.frames
        defer { self.frames = frames }
        return frames.respond(to: frame) { execute($0, now: now) }
    }
}

/// What a simulated framed peripheral sends on its response characteristic, in order. The engine answers inside
/// the actor; a separate delivery task notifies, so a write is answered before its response goes out.
enum FramedOutgoing: Sendable {
    case segments([[UInt8]])
    /// Drops the link after `delay` (zero: at once, right after what was queued before it).
    case hangUp(after: Duration)

    /// Notifies what `outbox` holds on `response`, in order; a hang-up ends the link and so this task, its delay
    /// counted on `time`.
    static func deliver(_ outbox: AsyncStream<FramedOutgoing>, response: BluetoothUUID, on link: any PeripheralLink,
                        time: TimeSource) async {
        for await item in outbox {
            switch item {
            case .segments(let segments):
                for segment in segments { await link.notify(response, value: segment) }
            case .hangUp(let delay):
                if delay > .zero {
                    do { try await time.sleep(for: delay) } catch { return }
                }
                await link.disconnect()
                return
            }
        }
    }
}

/// The radio faults the framed peripherals offer for tests: the first `responsesToLose` responses vanish (the host
/// must send again), and the link drops once, right after the `dropAfterPages`-th page of a download was sent.
struct FramedFaults: Sendable {
    private(set) var responsesToLose: Int
    let dropAfterPages: Int
    private var dropped = false

    /// Options `lose_responses` (0…1,000) and `drop_after_pages` (0: never).
    init(reading options: inout SimulationOptionReader) throws(SimulatedDeviceConfigurationError) {
        dropAfterPages = try options.int("drop_after_pages", default: 0, in: 0...1_000_000)
        responsesToLose = try options.int("lose_responses", default: 0, in: 0...1_000)
    }

    /// Whether this response is lost; counts it.
    mutating func losesResponse() -> Bool {
        guard responsesToLose > 0 else { return false }
        responsesToLose -= 1
        return true
    }

    /// Whether the link drops now that `pagesServed` pages went out; true once.
    mutating func dropsLink(pagesServed: Int) -> Bool {
        guard dropAfterPages > 0, !dropped, pagesServed >= dropAfterPages else { return false }
        dropped = true
        return true
    }
}
