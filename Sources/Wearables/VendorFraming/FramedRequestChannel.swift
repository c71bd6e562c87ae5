import BlueZ
import EventLoop
import Synchronization

/// The host side of a framed vendor control channel (GoFIT and the ActiGraph Link share the framing,
/// docs/protocols/gofit.md "Segments" and "Frames"), for one connection: segments each request frame into the
/// request characteristic, reassembles the response notifications, and matches a response by opcode | 0x80 and
/// sequence number.
///
/// One request is in flight at a time (the device answers in order and keeps one transfer). The device's silence
/// is measured from the last segment of the awaited answer, so a long page is not cut off while it streams in (and
/// segments of anything else — frames the device sends unasked, answers to other requests — do not keep a request
/// the device ignores waiting for ever); after
/// `silenceLimit` the request is sent again with the same sequence number, which the device answers from its
/// cache without executing it twice; a second silence is `TIMEOUT`. Frames the device sends unasked (opcodes
/// `unsolicitedOpcodes`) go to `onUnsolicited`.
///
/// Knows frames only: what a payload means is the vendor's codec's.
final class FramedRequestChannel: Sendable {
    private enum Signal: Sendable {
        /// A segment of the awaited frame arrived that did not complete it: the device is still answering.
        case progress
        case response(VendorFrame)
        case tick
    }

    private struct Waiter {
        var opcode: UInt8
        var sequence: UInt8
        var signals: AsyncStream<Signal>.Continuation
    }

    private struct State {
        var reassembler = FrameReassembler()
        var nextSequence: UInt8 = 0
        var waiter: Waiter?
        var malformedFrames = 0
    }

    private let state = Mutex(State())
    /// One exchange at a time, in the order asked for; run on the queue's task, so a caller's cancellation never
    /// leaves a request without its response.
    private let requests = OrderedWorkQueue()
    private let link: DeviceLink
    private let requestCharacteristic: GattCharacteristicInfo
    private let peerName: String
    private let unsolicitedOpcodes: ClosedRange<UInt8>?
    private let onUnsolicited: @Sendable (VendorFrame) -> Void
    private let silenceLimit: Duration

    /// `peerName` ("the band", "the Link") is what log lines and errors call the device.
    init(link: DeviceLink, request: GattCharacteristicInfo, peerName: String, silenceLimit: Duration = .seconds(3),
         unsolicitedOpcodes: ClosedRange<UInt8>? = nil,
         onUnsolicited: @escaping @Sendable (VendorFrame) -> Void = { _ in }) {
        self.link = link
        self.requestCharacteristic = request
        self.peerName = peerName
        self.silenceLimit = silenceLimit
        self.unsolicitedOpcodes = unsolicitedOpcodes
        self.onUnsolicited = onUnsolicited
    }

    /// Frames dropped since the channel opened because their length or CRC was wrong.
    var malformedFrames: Int { state.withLock { $0.malformedFrames } }

    /// One notification of the response characteristic.
    func receive(_ segment: [UInt8]) {
        let (progress, completed) = state.withLock { state -> (AsyncStream<Signal>.Continuation?, [UInt8]?) in
            let completed = state.reassembler.append(segment)
            guard completed == nil, let waiter = state.waiter,
                  let inProgress = state.reassembler.frameInProgress,
                  inProgress.opcode == waiter.opcode, inProgress.sequence == waiter.sequence else { return (nil, completed) }
            return (waiter.signals, nil)
        }
        guard let completed else {
            progress?.yield(.progress)
            return
        }
        let frame: VendorFrame
        do {
            frame = try VendorFrame(decoding: completed)
        } catch {
            // A garbled answer is no answer: the silence runs on, and the request goes again.
            state.withLock { $0.malformedFrames += 1 }
            link.logger.warning("dropped a malformed frame from \(peerName)", metadata: ["error": "\(error)"])
            return
        }
        if let unsolicitedOpcodes, unsolicitedOpcodes.contains(frame.opcode) {
            onUnsolicited(frame)
            return
        }
        state.withLock { state in
            guard let waiter = state.waiter, waiter.opcode == frame.opcode, waiter.sequence == frame.sequence else { return }
            waiter.signals.yield(.response(frame))
        }
    }

    /// Sends a request frame of `opcode` and `payload` and answers the response frame, whatever it says.
    func exchange(opcode: UInt8, payload: [UInt8], name: String) async throws(CommandError) -> VendorFrame {
        let result = await requests.run { [self] () async -> Result<VendorFrame, CommandError> in
            do throws(CommandError) {
                return .success(try await send(opcode: opcode, payload: payload, name: name))
            } catch { return .failure(error) }
        }
        return try result.get()
    }

    private func send(opcode: UInt8, payload: [UInt8], name: String) async throws(CommandError) -> VendorFrame {
        let sequence = state.withLock { state in
            defer { state.nextSequence &+= 1 }
            return state.nextSequence
        }
        let frame = VendorFrame(opcode: opcode, sequence: sequence, payload: payload)
        let segments = FrameSegmenter.segments(of: frame.encoded())
        let (signals, continuation) = AsyncStream.makeStream(of: Signal.self)
        state.withLock { $0.waiter = Waiter(opcode: opcode | 0x80, sequence: sequence, signals: continuation) }
        // Unstructured: ticks the exchange's silence check into its signal stream; cancelled after the exchange.
        let ticker = Task {
            while !Task.isCancelled {
                try? await link.time.sleep(for: .milliseconds(250))
                continuation.yield(.tick)
            }
        }
        defer {
            ticker.cancel()
            state.withLock { $0.waiter = nil }
            continuation.finish()
        }
        var iterator = signals.makeAsyncIterator()
        for _ in 1...2 {
            for segment in segments {
                try await link.write(requestCharacteristic, segment, withResponse: true)
            }
            var lastHeard = link.time.now
            waiting: while let signal = await iterator.next() {
                switch signal {
                case .response(let response): return response
                case .progress: lastHeard = link.time.now
                case .tick: if link.time.now - lastHeard >= silenceLimit { break waiting }
                }
            }
            link.logger.debug("\(peerName) was silent; sending the request again", metadata: ["request": "\(name)"])
        }
        throw CommandError(.timeout, "\(peerName) did not answer \(name) (sent twice, \(silenceLimit) of silence each)")
    }
}

/// Helpers the framed vendor drivers (GoFIT, ActiGraph) share around their channels.
enum VendorSession {
    /// The channel of the current connection, once the session has set it up: a command sent in the first
    /// moments of a connection waits up to 5 s (on the link's clock) for it, woken when the session sets it up.
    static func ready<Channel>(_ probe: () -> Channel?, when readiness: ConnectionReadiness, peerName: String,
                               link: DeviceLink) async throws(CommandError) -> Channel {
        if await readiness.wait(upTo: .seconds(5), on: link.time), let channel = probe() { return channel }
        throw CommandError(.deviceDisconnected, "\(peerName)'s connection is not ready yet")
    }

    /// Runs a decoding step, reporting a malformed answer as `INTERNAL`: the device broke the protocol.
    static func decoded<T>(from peerName: String, _ body: () throws(GATTCodecError) -> T) throws(CommandError) -> T {
        do { return try body() } catch {
            throw CommandError(.internalError, "\(peerName)'s answer could not be read: \(error)")
        }
    }
}
