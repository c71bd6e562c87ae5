#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// Calls `written` after each write to a file a child process appends to (inotify's `IN_MODIFY`), so a test waits
/// on what the child wrote instead of reading the file again on a timer. `stop` removes the watch; it does not
/// close the file or stop the child.
public final class FileWriteWatcher: Sendable {
    private let events: FileWriteEvents
    private let watch: FileWriteEvents.Watch

    public init(path: String, written: @escaping @Sendable () -> Void) throws {
        events = try FileWriteEvents.shared()
        watch = try events.add(path: path, written)
    }

    /// No call of `written` starts after this returns (one running may finish). Idempotent.
    public func stop() { events.remove(watch) }

    deinit { stop() }
}

/// The test process's one inotify instance, read on a dispatch queue: a user may hold only 128 instances
/// (`fs.inotify.max_user_instances`) across every process they run, and the end-to-end suites run many
/// subscribers at once, so each watch is a watch descriptor of this instance rather than an instance of its own.
/// It lives as long as the process.
final class FileWriteEvents: Sendable {
    struct Watch: Sendable {
        let descriptor: Int32
        let id: UInt64
    }

    private struct Watches {
        var callbacks: [Int32: [UInt64: @Sendable () -> Void]] = [:]
        var nextID: UInt64 = 0
    }

    private static let instance = Mutex<FileWriteEvents?>(nil)

    /// The instance, made at the first watch.
    static func shared() throws -> FileWriteEvents {
        try instance.withLock { shared in
            if let shared { return shared }
            let made = try FileWriteEvents()
            shared = made
            return made
        }
    }

    private let descriptor: Int32
    private let watches = Mutex(Watches())
    // nonisolated(unsafe): a `DispatchSourceRead` is not `Sendable`; this one is set up in `init` and only kept alive
    // after (never cancelled, its handler runs on its queue for the process's life).
    private nonisolated(unsafe) let source: DispatchSourceRead

    private init() throws {
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw TestSetupError("inotify_init1: \(String(cString: strerror(errno)))") }
        source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: DispatchQueue(label: "wear2mqtt.file-writes"))
        source.setEventHandler { [weak self] in self?.deliver() }
        source.activate()
    }

    func add(path: String, _ written: @escaping @Sendable () -> Void) throws -> Watch {
        try watches.withLock { watches in
            let watchDescriptor = inotify_add_watch(descriptor, path, UInt32(IN_MODIFY))
            guard watchDescriptor >= 0 else { throw TestSetupError("inotify_add_watch \(path): \(String(cString: strerror(errno)))") }
            watches.nextID += 1
            // The same file watched twice is the same watch descriptor: each watcher has its own entry under it.
            watches.callbacks[watchDescriptor, default: [:]][watches.nextID] = written
            return Watch(descriptor: watchDescriptor, id: watches.nextID)
        }
    }

    func remove(_ watch: Watch) {
        watches.withLock { watches in
            guard watches.callbacks[watch.descriptor]?.removeValue(forKey: watch.id) != nil else { return }
            if watches.callbacks[watch.descriptor]?.isEmpty == true {
                watches.callbacks[watch.descriptor] = nil
                _ = inotify_rm_watch(descriptor, watch.descriptor)
            }
        }
    }

    /// Reads every pending event, then tells each watcher of a written file once.
    private func deliver() {
        var written = Set<Int32>()
        var ignored = Set<Int32>()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            buffer.withUnsafeBytes { bytes in
                var offset = 0
                while offset + MemoryLayout<inotify_event>.size <= count {
                    let event = bytes.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    if event.mask & UInt32(IN_IGNORED) != 0 { ignored.insert(event.wd) } else { written.insert(event.wd) }
                    offset += MemoryLayout<inotify_event>.size + Int(event.len)
                }
            }
        }
        let callbacks = watches.withLock { watches in
            // The kernel dropped these watches (their file is gone): forget them.
            for descriptor in ignored { watches.callbacks[descriptor] = nil }
            return written.flatMap { watches.callbacks[$0].map { Array($0.values) } ?? [] }
        }
        for callback in callbacks { callback() }
    }
}
