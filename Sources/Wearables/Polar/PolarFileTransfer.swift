import BlueZ
import EventLoop
import Synchronization

/// One PSFTP exchange at a time on the H10's MTU characteristic: writes a request's frames, then waits for the
/// answer's frames (joined by `PSFTPMessageAssembler`), the link's end, or a silence, whichever comes first.
///
/// As the SDK's `BlePsFtpClient.query` and `request` do: the frames are written without response where the
/// characteristic allows it, the answer arrives as notifications of the same characteristic, and an answer that
/// breaks off (a frame lost or out of order) is cancelled with `00 00 00`. Requests are framed for the 20-byte
/// payload every link carries (the longest, a start, is under 80 bytes); answers come at the link's own size.
/// The wait is for silence, not for the whole answer: a long fetch goes on as long as frames keep coming.
final class PolarFileTransfer: Sendable {
    private enum Arrival: Sendable {
        case frame
        case answer([UInt8])
        case refused(PSFTPErrorCode)
        case broken(String)
    }

    /// When the answer's latest frame came.
    private final class LastFrame: Sendable {
        let instant: Mutex<ContinuousClock.Instant>
        init(_ now: ContinuousClock.Instant) { instant = Mutex(now) }
    }

    private struct State {
        var assembler = PSFTPMessageAssembler()
        var waiter: AsyncStream<Arrival>.Continuation?
    }

    private let state = Mutex(State())
    /// One transfer at a time, in the order asked for (run on the queue's task: never cut short by a caller).
    let requests = OrderedWorkQueue()
    /// The longest wait for the next frame of an answer.
    let silence: Duration

    static let requestFrameSize = 20

    init(silence: Duration = .seconds(10)) { self.silence = silence }

    /// A fresh connection: a part held from the last one means nothing now.
    func reset() {
        state.withLock {
            $0.assembler = PSFTPMessageAssembler()
            $0.waiter?.finish()
            $0.waiter = nil
        }
    }

    /// One notification of the MTU characteristic.
    func receive(_ bytes: [UInt8]) {
        let (arrival, waiter) = state.withLock { state -> (Arrival, AsyncStream<Arrival>.Continuation?) in
            do {
                switch try state.assembler.receive(bytes) {
                case .incomplete: return (.frame, state.waiter)
                case .message(let message): return (.answer(message), state.waiter)
                case .failed(let code): return (.refused(code), state.waiter)
                case .interrupted: return (.broken("the device interrupted its answer"), state.waiter)
                }
            } catch {
                return (.broken("the device's answer broke off: \(error)"), state.waiter)
            }
        }
        waiter?.yield(arrival)
    }

    /// Writes `request` and returns the device's answer: its message (empty for one answered with code 0 alone).
    /// A PSFTP error code is the contract's error with `vendor_code`; `what` names the request in messages.
    func exchange(_ request: H10RecordingRequest, what: String, on characteristic: GattCharacteristicInfo,
                  link: DeviceLink) async throws(CommandError) -> [UInt8] {
        let frames: [[UInt8]]
        do { frames = try request.frames(mtu: Self.requestFrameSize) } catch {
            throw CommandError(.invalidValue, "\(what) cannot be encoded: \(error)")
        }
        let (stream, continuation) = AsyncStream.makeStream(of: Arrival.self)
        state.withLock {
            $0.assembler = PSFTPMessageAssembler()
            $0.waiter = continuation
        }
        defer {
            state.withLock { $0.waiter = nil }
            continuation.finish()
        }
        let withResponse = !characteristic.flags.contains("write-without-response")
        for frame in frames { try await write(frame, withResponse: withResponse, characteristic, link) }

        enum Outcome: Sendable { case arrival(Arrival), disconnected, silent }
        let silence = silence
        let lastFrame = LastFrame(link.time.now)
        let time = link.time
        let outcome = await withTaskGroup(of: Outcome?.self) { group in
            group.addTask {
                for await arrival in stream {
                    if case .frame = arrival {
                        lastFrame.instant.withLock { $0 = time.now }
                        continue
                    }
                    return .arrival(arrival)
                }
                return nil
            }
            group.addTask {
                await link.waitForDisconnection()
                return Task.isCancelled ? nil : .disconnected
            }
            group.addTask {
                // Wakes once per silence at most, and again only when frames came in the meantime.
                while !Task.isCancelled {
                    let deadline = lastFrame.instant.withLock { $0 } + silence
                    if time.now >= deadline { return .silent }
                    try? await time.sleep(until: deadline)
                }
                return nil
            }
            defer { group.cancelAll() }
            while let next = await group.next() {
                if let next { return next }
            }
            return Outcome.silent
        }
        switch outcome {
        case .arrival(.answer(let message)): return message
        case .arrival(.refused(let code)): throw CommandError(psftpError: code, request: what)
        case .arrival(.broken(let reason)):
            // As the SDK does: tell the device to stop sending the rest.
            try? await link.write(characteristic, PSFTPFrame.cancel.encode(), withResponse: withResponse)
            throw CommandError(.internalError, "\(what): \(reason)")
        case .arrival(.frame), .silent:
            throw CommandError(.timeout, "the device did not answer \(what) on its file transfer service within \(silence)")
        case .disconnected:
            throw CommandError(.deviceDisconnected, "the link dropped before the device finished answering \(what)")
        }
    }

    private func write(_ frame: [UInt8], withResponse: Bool, _ characteristic: GattCharacteristicInfo,
                       _ link: DeviceLink) async throws(CommandError) {
        do {
            try await link.write(characteristic, frame, withResponse: withResponse)
        } catch {
            // A write that races the link's end fails with whatever the stack says; it is a lost link all the same.
            if await link.goesDown(within: .milliseconds(500)) {
                throw CommandError(.deviceDisconnected, "the link dropped while writing to the file transfer service")
            }
            throw error
        }
    }
}
