import BlueZ
import Synchronization

/// The request/response channel to one band's vendor service for one connection: segments each request
/// frame into the Request characteristic, reassembles the Response notifications, and matches the response by
/// opcode and sequence number (docs/protocols/gofit.md, "Frames").
///
/// One request is in flight at a time (the band answers in order and keeps one transfer). The band's silence is
/// measured from the last segment received, so a long history page is not cut off while it streams in; after
/// 3 s of silence the request is sent again with the same sequence number, which the band answers from its
/// cache without executing it twice; a second silence is `TIMEOUT`. Events (find phone) go to `onEvent`.
final class GoFITChannel: Sendable {
    private enum Signal: Sendable {
        /// A segment arrived that did not complete the awaited frame: the band is still talking.
        case progress
        case response(GoFITResponse)
        case tick
    }

    private struct Waiter {
        var opcode: UInt8
        var sequence: UInt8
        var signals: AsyncStream<Signal>.Continuation
    }

    private struct State {
        var reassembler = GoFITReassembler()
        var nextSequence: UInt8 = 0
        var waiter: Waiter?
        var malformedFrames = 0
    }

    private let state = Mutex(State())
    private let requests = OperationChain()
    private let link: DeviceLink
    private let requestCharacteristic: GattCharacteristicInfo
    private let onEvent: @Sendable (GoFITEvent) -> Void
    private let silenceLimit: Duration

    init(link: DeviceLink, request: GattCharacteristicInfo, silenceLimit: Duration = .seconds(3),
         onEvent: @escaping @Sendable (GoFITEvent) -> Void) {
        self.link = link
        self.requestCharacteristic = request
        self.silenceLimit = silenceLimit
        self.onEvent = onEvent
    }

    /// One notification of the Response characteristic.
    func receive(_ segment: [UInt8]) {
        let (waiter, completed) = state.withLock { state in (state.waiter?.signals, state.reassembler.append(segment)) }
        guard let completed else {
            waiter?.yield(.progress)
            return
        }
        let frame: GoFITFrame
        do {
            frame = try GoFITFrame(decoding: completed)
        } catch {
            state.withLock { $0.malformedFrames += 1 }
            link.logger.warning("dropped a malformed frame from the band", metadata: ["error": "\(error)"])
            waiter?.yield(.progress)
            return
        }
        if frame.opcode >= 0xE0 {
            do { onEvent(try GoFITEvent(frame: frame)) } catch {
                link.logger.notice("ignored an unknown event from the band", metadata: ["opcode": "\(frame.opcode)"])
            }
            return
        }
        let response: GoFITResponse
        do { response = try GoFITResponse(frame: frame) } catch {
            link.logger.warning("dropped a response that cannot be read", metadata: ["error": "\(error)"])
            return
        }
        state.withLock { state in
            guard let waiter = state.waiter, waiter.opcode == frame.opcode, waiter.sequence == frame.sequence else { return }
            waiter.signals.yield(.response(response))
        }
    }

    /// Sends `request` and answers the response's data; a status other than OK is thrown as the contract's error
    /// with the status as `vendor_code`.
    func call(_ request: GoFITRequest) async throws(CommandError) -> [UInt8] {
        let response = try await send(request)
        if let error = response.status.commandError { throw error }
        return response.data
    }

    /// Sends `request` and answers the band's response, whatever its status.
    func send(_ request: GoFITRequest) async throws(CommandError) -> GoFITResponse {
        let result = await requests.run { [self] () async -> Result<GoFITResponse, CommandError> in
            do throws(CommandError) { return .success(try await exchange(request)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    private func exchange(_ request: GoFITRequest) async throws(CommandError) -> GoFITResponse {
        let sequence = state.withLock { state in
            defer { state.nextSequence &+= 1 }
            return state.nextSequence
        }
        let segments = GoFITSegmenter.segments(of: request.frame(sequence: sequence).encoded())
        let (signals, continuation) = AsyncStream.makeStream(of: Signal.self)
        state.withLock { $0.waiter = Waiter(opcode: request.opcode.responseOpcode, sequence: sequence, signals: continuation) }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
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
            var lastHeard = ContinuousClock.now
            waiting: while let signal = await iterator.next() {
                switch signal {
                case .response(let response): return response
                case .progress: lastHeard = .now
                case .tick: if ContinuousClock.now - lastHeard >= silenceLimit { break waiting }
                }
            }
            link.logger.debug("the band was silent; sending the request again", metadata: ["opcode": "\(request.opcode)"])
        }
        throw CommandError(.timeout, "the band did not answer \(request.opcode) (sent twice, \(silenceLimit) of silence each)")
    }
}
