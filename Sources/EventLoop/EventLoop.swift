#if canImport(Glibc)
import Glibc
#endif
import CEpoll
import FoundationEssentials
import Synchronization

/// One thread that waits in `epoll_wait` for every descriptor of the data path — the notification sockets
/// AcquireNotify hands out, the MQTT socket, the D-Bus connection — and runs, on that thread, whatever they are
/// ready for, the timers that are due and the tasks other threads submitted. A notification is read, decoded,
/// encoded and handed to libmosquitto without leaving it, and what the iteration queued for the broker is
/// written once at its end (`whenIterationEnds`), so a burst of samples costs one wake-up and one write.
///
/// Modelled on swift-nio's `SelectableEventLoop`, reduced to what the gateway needs: registrations by id (a stale
/// event for a descriptor number that was closed and reused meanwhile is never delivered to the new owner),
/// level-triggered interest, a task queue woken through an eventfd only when it goes from empty to non-empty.
///
/// Registration, timers and hooks belong to the loop thread: call them from a handler or a task (`execute`), or
/// before the loop runs; debug builds trap when they are called from another thread while it runs. State of other
/// types that only the loop touches is held in a `LoopBound`, or its methods begin with `assertInEventLoop()`.
/// `@unchecked Sendable`: the task queue is behind a mutex; everything else is confined to the loop thread (checked in
/// debug builds, as above).
public final class EventLoop: @unchecked Sendable {
    /// What a registration wants to hear about.
    public struct Interest: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let readable = Interest(rawValue: EPOLLIN.rawValue)
        public static let writable = Interest(rawValue: EPOLLOUT.rawValue)
    }

    /// What a descriptor is ready for, as `epoll_wait` reported it.
    public struct Readiness: Sendable {
        public let events: UInt32
        public var isReadable: Bool { events & EPOLLIN.rawValue != 0 }
        public var isWritable: Bool { events & EPOLLOUT.rawValue != 0 }
        /// The peer hung up or the descriptor failed: read what is left, then deregister.
        public var isHangUp: Bool { events & (EPOLLHUP.rawValue | EPOLLERR.rawValue | EPOLLRDHUP.rawValue) != 0 }
    }

    /// A descriptor's registration, for `setInterest` and `deregister`.
    public struct Registration: Hashable, Sendable {
        let id: UInt64
        public let descriptor: Int32
    }

    public struct Failure: Error, CustomStringConvertible {
        public let operation: String
        public let errno: Int32
        public var description: String { "\(operation) failed: \(String(cString: strerror(errno)))" }
    }

    public let name: String
    private let epoll: Int32
    private let wakeDescriptor: Int32
    /// `ended`: the loop has run its last iteration; a task submitted after that is dropped, not kept.
    private let queue = Mutex<(tasks: [@Sendable () -> Void], sleeping: Bool, ended: Bool)>(([], false, false))
    /// The loop's thread while `run` runs; nil before and after.
    private let threadID = Mutex<pthread_t?>(nil)
    private let stopped = Atomic<Bool>(false)

    // Loop-thread state.
    private var handlers: [UInt64: (Readiness) -> Void] = [:]
    private var nextID: UInt64 = 1
    private var timers = TimerQueue<() -> Void>()
    private var iterationHooks: [(id: UInt64, hook: () -> Void)] = []
    private var events = [epoll_event](repeating: epoll_event(), count: 256)
    private var running: [@Sendable () -> Void] = []

    /// When descriptors become ready closer together than this, the loop lets the rest of the window pass before
    /// it waits again, so the notifications of a busy moment share one wake-up and one write to the broker
    /// (interrupt moderation, as network cards do it). Zero: every event is handled the moment it arrives. A quiet
    /// loop (events further apart than two windows) never waits: a lone notification costs no extra latency.
    /// Set before `start`.
    public var coalescingWindow: Duration = .zero
    private var lastReadyAt: ContinuousClock.Instant?

    /// Id 0 in `epoll_data` is the wake eventfd.
    private static let wakeID: UInt64 = 0

    public init(name: String) throws(Failure) {
        self.name = name
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw Failure(operation: "epoll_create1", errno: errno) }
        wakeDescriptor = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        guard wakeDescriptor >= 0 else {
            let error = errno
            _ = Glibc.close(epoll)
            throw Failure(operation: "eventfd", errno: error)
        }
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: Self.wakeID))
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, wakeDescriptor, &event) == 0 else {
            let error = errno
            _ = Glibc.close(wakeDescriptor)
            _ = Glibc.close(epoll)
            throw Failure(operation: "epoll_ctl", errno: error)
        }
    }

    /// A loop already running on its own thread.
    public static func started(name: String) throws(Failure) -> EventLoop {
        let loop = try EventLoop(name: name)
        loop.start()
        return loop
    }

    deinit {
        _ = Glibc.close(wakeDescriptor)
        _ = Glibc.close(epoll)
    }

    /// Starts the loop's thread. The loop keeps itself alive until `stop()`.
    public func start() {
        NamedThread.start(name) { [self] in run() }
    }

    /// Ends the loop after the current iteration; its registrations are dropped (their descriptors stay open:
    /// they belong to whoever registered them).
    public func stop() {
        stopped.store(true, ordering: .releasing)
        wake()
    }

    /// Whether the caller runs on the loop's thread. False before the loop runs and after it ended.
    public var inEventLoop: Bool {
        guard let id = threadID.withLock({ $0 }) else { return false }
        return pthread_equal(id, pthread_self()) != 0
    }

    /// Traps in debug builds when the caller is not on the loop's thread; release builds check nothing and pay
    /// nothing (`assert`). Call it first in a method that touches state only the loop may touch; `LoopBound` calls it
    /// on every access. `inEventLoop` asks the same without trapping.
    @inlinable
    public func assertInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(inEventLoop, "\(name): loop-confined state touched off the loop thread", file: file, line: line)
    }

    /// The loop's own state (registrations, timers, hooks) may be touched on its thread, or by anyone while no thread
    /// runs it (set-up before `start`, clean-up after the end). Debug builds only.
    private func assertMayTouchLoopState(_ what: StaticString, line: UInt = #line) {
        assert(threadID.withLock({ id in id.map { pthread_equal($0, pthread_self()) != 0 } ?? true }),
               "\(name): \(what) called off the loop thread while it runs", line: line)
    }

    // MARK: From any thread

    /// Runs `task` on the loop thread, after what was submitted before it. From the loop thread itself it runs
    /// in the same iteration, before the iteration's end hooks, without a wake-up.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        let mustWake = queue.withLock { queue -> Bool in
            guard !queue.ended else { return false }
            queue.tasks.append(task)
            defer { queue.sleeping = false }
            return queue.sleeping
        }
        if mustWake { wake() }
    }

    private func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeDescriptor, &one, 8)
    }

    // MARK: On the loop thread

    /// Calls `handler` on the loop thread whenever `descriptor` is ready for `interest` (level-triggered).
    public func register(_ descriptor: Int32, interest: Interest,
                         _ handler: @escaping (Readiness) -> Void) throws(Failure) -> Registration {
        precondition(threadID.withLock({ id in id.map { pthread_equal($0, pthread_self()) != 0 } ?? true }),
                     "register on the loop thread")
        let id = nextID
        nextID += 1
        var event = epoll_event(events: interest.rawValue | EPOLLRDHUP.rawValue, data: epoll_data_t(u64: id))
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor, &event) == 0 else {
            throw Failure(operation: "epoll_ctl(ADD)", errno: errno)
        }
        handlers[id] = handler
        return Registration(id: id, descriptor: descriptor)
    }

    /// Changes what `registration` wants to hear about (the MQTT socket wants `writable` only while libmosquitto
    /// has bytes it could not write).
    public func setInterest(_ registration: Registration, _ interest: Interest) {
        assertMayTouchLoopState("setInterest")
        guard handlers[registration.id] != nil else { return }
        var event = epoll_event(events: interest.rawValue | EPOLLRDHUP.rawValue, data: epoll_data_t(u64: registration.id))
        _ = epoll_ctl(epoll, EPOLL_CTL_MOD, registration.descriptor, &event)
    }

    /// Stops delivering events for `registration`. Call it before closing the descriptor.
    public func deregister(_ registration: Registration) {
        assertMayTouchLoopState("deregister")
        guard handlers.removeValue(forKey: registration.id) != nil else { return }
        var event = epoll_event()
        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, registration.descriptor, &event)
    }

    /// Runs `task` on the loop thread at `deadline` (or at the first iteration after it).
    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, _ task: @escaping () -> Void) -> TimerQueue<() -> Void>.ID {
        assertMayTouchLoopState("schedule")
        return timers.schedule(at: deadline, task)
    }

    public func cancel(_ timer: TimerQueue<() -> Void>.ID) {
        assertMayTouchLoopState("cancel")
        timers.cancel(timer)
    }

    /// Runs `hook` at the end of every iteration, after the events, timers and tasks: where work queued during
    /// the iteration is flushed at once. Answers an id for `removeIterationHook`.
    @discardableResult
    public func whenIterationEnds(_ hook: @escaping () -> Void) -> UInt64 {
        assertMayTouchLoopState("whenIterationEnds")
        let id = nextID
        nextID += 1
        iterationHooks.append((id, hook))
        return id
    }

    public func removeIterationHook(_ id: UInt64) {
        assertMayTouchLoopState("removeIterationHook")
        iterationHooks.removeAll { $0.id == id }
    }

    // MARK: The loop

    private func run() {
        threadID.withLock { $0 = pthread_self() }
        while !stopped.load(ordering: .acquiring) {
            let count = epoll_wait(epoll, &events, Int32(events.count), timeoutMilliseconds())
            queue.withLock { $0.sleeping = false }
            let wokeAt = coalescingWindow > .zero ? ContinuousClock.now : nil
            var descriptorsReady = false
            if count > 0 {
                for index in 0..<Int(count) {
                    let id = events[index].data.u64
                    if id == Self.wakeID {
                        var value: UInt64 = 0
                        _ = Glibc.read(wakeDescriptor, &value, 8)
                        continue
                    }
                    descriptorsReady = true
                    // A handler earlier in this batch may have deregistered this one.
                    handlers[id]?(Readiness(events: events[index].events))
                }
            }
            for task in timers.takeDue(at: .now) { task() }
            runTasks()
            for (_, hook) in iterationHooks { hook() }
            if descriptorsReady, let wokeAt { coalesce(wokeAt: wokeAt) }
        }
        handlers = [:]
        iterationHooks = []
        timers = TimerQueue()
        // Tasks that came too late to run hold whatever they captured (an owner that holds this loop: a cycle).
        queue.withLock { queue in
            queue.tasks.removeAll()
            queue.ended = true
        }
        running = []
        threadID.withLock { $0 = nil }
    }

    /// After an iteration that handled ready descriptors: if the previous such iteration began less than two
    /// windows before this one (one window is what a coalesced iteration lasts), the loop is busy, and it sleeps until a window has passed since this one began (never
    /// past a timer's deadline), so what arrives meanwhile is handled in one go.
    private func coalesce(wokeAt: ContinuousClock.Instant) {
        defer { lastReadyAt = wokeAt }
        guard let previous = lastReadyAt, wokeAt - previous < coalescingWindow * 2 else { return }
        var until = wokeAt + coalescingWindow
        if let deadline = timers.nextDeadline(), deadline < until { until = deadline }
        let rest = until - .now
        guard rest > .microseconds(50) else { return }
        let (seconds, attoseconds) = rest.components
        var duration = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        _ = nanosleep(&duration, nil)
    }

    /// Runs the tasks submitted so far; tasks they submit run in the next iteration (without waiting). The queue
    /// and `running` trade their buffers, so a steady stream of tasks allocates nothing.
    private func runTasks() {
        queue.withLock { queue in
            guard !queue.tasks.isEmpty else { return }
            swap(&queue.tasks, &running)
        }
        for task in running { task() }
        running.removeAll(keepingCapacity: true)
    }

    /// 0 when tasks are waiting, else until the next timer (-1: none); declares the loop asleep so `execute` wakes it.
    private func timeoutMilliseconds() -> Int32 {
        let waiting = queue.withLock { queue -> Bool in
            if queue.tasks.isEmpty { queue.sleeping = true }
            return !queue.tasks.isEmpty
        }
        if waiting { return 0 }
        guard let deadline = timers.nextDeadline() else { return -1 }
        let wait = deadline - .now
        if wait <= .zero { return 0 }
        let (seconds, attoseconds) = wait.components
        // Rounded up, so a timer never fires a millisecond early and spins.
        return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
