/// The failure guard of a wait that has no timeout of its own (an async stream's `next()` on a client's messages):
/// runs `onHang` once `timeout` has passed unless cancelled first, so a broken process fails the test instead of
/// hanging it. As `ChangeNotifier.until`'s timeout, it is never what a test waits for: a passing wait cancels it.
public struct HangGuard: Sendable {
    private let task: Task<Void, Never>

    public init(after timeout: Duration, _ onHang: @escaping @Sendable () async -> Void) {
        // Unstructured: it must outlive the caller's scope until cancelled.
        task = Task {
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            await onHang()
        }
    }

    public func cancel() { task.cancel() }
}
