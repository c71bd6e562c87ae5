import FoundationEssentials
import EventLoop
import Synchronization

/// Runs a file access a request asked for (a DFU package, the `dfu.dir` listing) on a thread of its own and waits
/// for it at most `limit`. Opening or reading a file can block for as long as the file system likes (a FIFO
/// without a writer, a hung network mount); on the data-path loop or a cooperative-pool thread that would stall
/// samples, answers and shutdown. A thread that stays blocked is abandoned, not killed: its answer is dropped
/// when it comes, and while `maximumAbandoned` are still blocked further accesses are refused at once, so hostile
/// requests cannot pile up threads.
///
/// It does not make the access itself safe: `DFUPackageFile` still refuses anything but regular files.
enum FileAccessOffLoop {
    static let limit = Duration.seconds(10)
    static let maximumAbandoned = 4

    enum Failure: Error, Equatable {
        /// The access did not finish within the limit (it may still finish; its result is dropped).
        case timedOut(Duration)
        /// Too many earlier accesses are still blocked.
        case busy
    }

    /// Accesses that timed out and whose threads have not returned yet.
    private static let abandoned = Atomic<Int>(0)

    static func run<Value: Sendable>(
        within limit: Duration = limit, _ work: @escaping @Sendable () -> Value
    ) async -> Result<Value, Failure> {
        guard abandoned.load(ordering: .relaxed) < maximumAbandoned else { return .failure(.busy) }
        let answer = OneAnswer<Result<Value, Failure>>()
        return await withCheckedContinuation { continuation in
            answer.await(continuation)
            // Unstructured: the time limit of a blocking file access that cannot be cancelled; cancelled when it answers.
            let timer = Task {
                try? await Task.sleep(for: limit)
                if !Task.isCancelled, answer.give(.failure(.timedOut(limit))) { abandoned.add(1, ordering: .relaxed) }
            }
            NamedThread.start("file-access") {
                let value = work()
                timer.cancel()
                if !answer.give(.success(value)) { abandoned.subtract(1, ordering: .relaxed) }
            }
        }
    }
}

/// The continuation of one `FileAccessOffLoop.run`, resumed by whichever of the work and the timer is first.
private final class OneAnswer<Value: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<Value, Never>?>(nil)

    func await(_ waiting: CheckedContinuation<Value, Never>) { continuation.withLock { $0 = waiting } }

    /// Resumes the waiter with `value`; false if the other side already had.
    func give(_ value: Value) -> Bool {
        guard let waiting = continuation.withLock({ $0.take() }) else { return false }
        waiting.resume(returning: value)
        return true
    }
}
