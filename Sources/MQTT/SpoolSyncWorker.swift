#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import EventLoop
import FoundationEssentials
import Synchronization

/// The durable spool's own thread, started once per spool: it runs one `SpoolSyncJob` at a time, so an fdatasync that
/// takes 200 ms on a slow SD card stalls this thread and never the data-path loop, where notifications, the MQTT socket
/// and D-Bus are served. It decides nothing (`SpoolDurability` does when a job starts); after each job it keeps the
/// outcome for `takeFinished()` and calls the handler set with `whenJobReturns`, on its own thread.
final class SpoolSyncWorker: Sendable {
    private struct State {
        var job: SpoolSyncJob?
        var running = false
        var finished: [SpoolSyncOutcome] = []
        var stopping = false
        var jobReturned: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())
    /// Signalled for each job submitted and for the stop.
    private let wake = DispatchSemaphore(value: 0)
    /// Signalled after each job (`waitUntilIdle` re-checks the state, so a signal nobody waited for costs a turn).
    private let returned = DispatchSemaphore(value: 0)
    private let sync: @Sendable (Int32) -> Int32

    /// `sync`: fdatasync; tests inject a slow one.
    init(name: String, sync: @escaping @Sendable (Int32) -> Int32) {
        self.sync = sync
        // The thread keeps the worker alive until `stop`.
        NamedThread.start(name) { [self] in work() }
    }

    /// Called on the worker's thread after each job (the owner hands it to its loop).
    func whenJobReturns(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.jobReturned = handler }
    }

    /// Runs `job` on the worker's thread. One at a time: the caller submits the next after the last returned.
    func submit(_ job: SpoolSyncJob) {
        state.withLock { state in
            precondition(state.job == nil && !state.running, "a spool sync job submitted while one runs")
            state.job = job
        }
        wake.signal()
    }

    /// The outcomes of the jobs that returned since the last call, oldest first.
    func takeFinished() -> [SpoolSyncOutcome] {
        state.withLock { state in
            defer { state.finished.removeAll() }
            return state.finished
        }
    }

    /// Blocks until no job is waiting or running: at shutdown only, before the final sync.
    func waitUntilIdle() {
        while state.withLock({ $0.job != nil || $0.running }) { returned.wait() }
    }

    /// Ends the thread after the job it runs, if any. The descriptors of a job never started are closed unsynced.
    func stop() {
        state.withLock { $0.stopping = true }
        wake.signal()
    }

    private func work() {
        while true {
            wake.wait()
            let next = state.withLock { state -> (job: SpoolSyncJob?, stop: Bool) in
                if state.stopping { return (nil, true) }
                defer { state.job = nil }
                state.running = state.job != nil
                return (state.job, false)
            }
            if next.stop { break }
            guard let job = next.job else { continue }
            let outcome = job.run(sync: sync)
            let handler = state.withLock { state in
                state.finished.append(outcome)
                state.running = false
                return state.jobReturned
            }
            returned.signal()
            handler?()
        }
        let abandoned = state.withLock { state in
            defer { state.job = nil }
            return state.job
        }
        for descriptor in abandoned?.descriptors ?? [] { close(descriptor) }
        returned.signal()
    }
}
