/// State that only one `EventLoop`'s thread touches — loop confinement checked, not commented. Every access checks,
/// in debug builds, that it is made on the loop's thread and traps when it is not (`EventLoop.assertInEventLoop`);
/// release builds check nothing and pay nothing. In the spirit of swift-nio's `NIOLoopBoundBox`.
///
/// It does not make the value safe to share: it makes a wrong thread fail loudly in tests and debug runs instead of
/// racing quietly. A reference, so the closures a loop runs (handlers, timers, tasks) can share one value.
///
/// `@unchecked Sendable`: the box may travel to any thread (inside a closure the loop will run); its value is read and
/// written only on the loop's thread, which each access checks in debug builds.
public final class LoopBound<Value>: @unchecked Sendable {
    public let loop: EventLoop
    @usableFromInline var storage: Value

    /// From any thread: `value` is handed over whole (`sending`: the caller keeps no reference to it), so the loop's
    /// thread is the only one that will touch it.
    public init(_ value: sending Value, loop: EventLoop) {
        self.loop = loop
        storage = value
    }

    /// The value, on the loop's thread only (checked in debug builds). Mutated in place.
    @inlinable
    public var value: Value {
        get {
            loop.assertInEventLoop()
            return storage
        }
        set {
            loop.assertInEventLoop()
            storage = newValue
        }
        _modify {
            loop.assertInEventLoop()
            yield &storage
        }
    }
}
