import BlueZ
import EventLoop
import Synchronization

/// One request at a time on the PMD control point: writes it, then waits for the device's indicated response
/// (joined from its parts by `PMDResponseAssembler`), the link's end or a timeout, whichever comes first.
///
/// The session's control point notifications go to `receive`; a "measurement stopped" notice comes back from it
/// for the driver to act on. Requests go through one `OrderedWorkQueue` (`requests.run`), so a command and the session's
/// re-application after a reconnect never interleave their writes and responses.
final class PolarControlPoint: Sendable {
    private struct State {
        var assembler = PMDResponseAssembler()
        var waiter: AsyncStream<PMDControlPointResponse>.Continuation?
    }

    private let state = Mutex(State())
    let requests = OrderedWorkQueue()
    let timeout: Duration

    init(timeout: Duration = .seconds(5)) { self.timeout = timeout }

    /// A fresh connection: a part held from the last one means nothing now.
    func reset() {
        state.withLock {
            $0.assembler = PMDResponseAssembler()
            $0.waiter?.finish()
            $0.waiter = nil
        }
    }

    /// One control point indication; returns the types a "measurement stopped" notice names.
    func receive(_ bytes: [UInt8]) throws(GATTCodecError) -> [PMDMeasurementType] {
        let (output, waiter) = try state.withLock { state throws(GATTCodecError) in
            (try state.assembler.receive(bytes), state.waiter)
        }
        switch output {
        case .response(let response):
            waiter?.yield(response)
            return []
        case .stopped(let types):
            return types
        case .incomplete:
            return []
        }
    }

    /// Writes `request` and returns the device's response to it, whatever its status.
    func exchange(_ request: PMDControlPointRequest, on characteristic: GattCharacteristicInfo,
                  link: DeviceLink) async throws(CommandError) -> PMDControlPointResponse {
        let bytes: [UInt8]
        do { bytes = try request.encode() } catch { throw CommandError(.invalidValue, "the request cannot be encoded: \(error)") }
        let (stream, continuation) = AsyncStream.makeStream(of: PMDControlPointResponse.self)
        state.withLock { $0.waiter = continuation }
        defer {
            state.withLock { $0.waiter = nil }
            continuation.finish()
        }
        do {
            try await link.write(characteristic, bytes, withResponse: true)
        } catch {
            // A write that races the link's end fails with whatever the stack says; it is a lost link all the same.
            if await link.goesDown(within: .milliseconds(500)) {
                throw CommandError(.deviceDisconnected, "the link dropped while writing to the control point")
            }
            throw error
        }
        let opCode = request.opCode.rawValue
        enum Outcome: Sendable { case response(PMDControlPointResponse), disconnected, silent }
        let timeout = timeout
        let outcome = await withTaskGroup(of: Outcome?.self) { group in
            group.addTask {
                for await response in stream where response.opCode == opCode { return .response(response) }
                return nil
            }
            group.addTask {
                await link.waitForDisconnection()
                return Task.isCancelled ? nil : .disconnected
            }
            group.addTask {
                try? await link.time.sleep(for: timeout)
                return Task.isCancelled ? nil : .silent
            }
            defer { group.cancelAll() }
            while let next = await group.next() {
                if let next { return next }
            }
            return Outcome.silent
        }
        switch outcome {
        case .response(let response): return response
        case .disconnected: throw CommandError(.deviceDisconnected, "the link dropped before the device answered")
        case .silent: throw CommandError(.timeout, "the device did not answer on its control point within \(timeout)")
        }
    }
}
