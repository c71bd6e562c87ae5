#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A long-running `mosquitto_sub -v`, the broker's own client, as an independent witness of what was published: a
/// test that checked our MQTT client with our MQTT client could share its mistakes. Each message it prints is a
/// "topic payload" line in its output file; the lines are read as the child writes them (`FileWriteWatcher`), kept by
/// topic, and each write wakes `until`, so a test waits on what the witness received rather than on a timer.
public final class MosquittoWitness: Sendable {
    public let child: ChildProcess
    /// Told of every write of the child's output.
    public let changes: ChangeNotifier
    private let lines: SubscriberLines
    private let watcher: FileWriteWatcher

    /// Starts `mosquitto_sub -v` on `topics` (`arguments` such as `-V 5`, `-q 1`), its output in `directory`.
    public init(port: Int, topics: [String], arguments: [String] = [], directory: TemporaryDirectory,
                name: String = "sub") throws {
        child = try MosquittoClients.subscriber(port: port, topics: topics, arguments: arguments, directory: directory, name: name)
        let changes = ChangeNotifier()
        self.changes = changes
        do {
            let lines = try SubscriberLines(path: child.outputPath)
            self.lines = lines
            watcher = try FileWriteWatcher(path: child.outputPath) {
                lines.readNew()
                changes.changed()
            }
        } catch {
            child.signal(SIGKILL)
            throw error
        }
    }

    /// Every payload received on `topic` (the whole topic name), in order.
    public func payloads(_ topic: String) -> [String] { lines.payloads(topic) }

    /// How many lines the witness printed: one a message.
    public var lineCount: Int { lines.count }

    /// Its whole output, as written.
    public var output: String { child.output }

    /// True as soon as `condition` holds, checked now and after each write of the witness; false if it still does not
    /// after `timeout`, a failure guard in real time.
    public func until(timeout: Duration = .seconds(20), _ condition: () async throws -> Bool) async rethrows -> Bool {
        try await changes.until(timeout: timeout, condition)
    }

    /// Stops the child, reads what it wrote last, and lets go of the watch and the file. Idempotent; what was read
    /// stays readable.
    public func stop() async {
        await child.stop()
        watcher.stop()
        lines.close()
    }
}

/// The lines of a file another process appends "topic payload" lines to, read from where the last read ended and
/// kept by topic: a check after each write costs the new bytes, not the whole file again.
final class SubscriberLines: Sendable {
    private struct State {
        var descriptor: Int32
        /// Where each read lands, kept: a wait reads at every message.
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        /// A line the child has not finished writing.
        var partial: [UInt8] = []
        var payloads: [String: [String]] = [:]
        var count = 0
    }

    private let state: Mutex<State>

    init(path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw TestSetupError("open \(path): \(String(cString: strerror(errno)))") }
        state = Mutex(State(descriptor: descriptor))
    }

    func payloads(_ topic: String) -> [String] {
        state.withLock { state in
            Self.readNew(&state)
            return state.payloads[topic] ?? []
        }
    }

    var count: Int {
        state.withLock { state in
            Self.readNew(&state)
            return state.count
        }
    }

    func readNew() { state.withLock { Self.readNew(&$0) } }

    deinit { close() }

    func close() {
        state.withLock { state in
            guard state.descriptor >= 0 else { return }
            Self.readNew(&state)
            _ = Glibc.close(state.descriptor)
            state.descriptor = -1
        }
    }

    private static func readNew(_ state: inout State) {
        let descriptor = state.descriptor
        guard descriptor >= 0 else { return }
        var buffer = [UInt8]()
        swap(&buffer, &state.buffer)
        defer { swap(&buffer, &state.buffer) }
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var start = 0
            for index in 0..<count where buffer[index] == UInt8(ascii: "\n") {
                if state.partial.isEmpty {
                    add(buffer[start..<index], to: &state)
                } else {
                    state.partial += buffer[start..<index]
                    add(state.partial[...], to: &state)
                    state.partial = []
                }
                start = index + 1
            }
            state.partial += buffer[start..<count]
        }
    }

    /// A line: its topic up to the first space, its payload after it. A line without a space names no topic.
    private static func add(_ line: ArraySlice<UInt8>, to state: inout State) {
        state.count += 1
        guard let space = line.firstIndex(of: UInt8(ascii: " ")) else { return }
        let topic = String(decoding: line[..<space], as: UTF8.self)
        state.payloads[topic, default: []].append(String(decoding: line[(space + 1)...], as: UTF8.self))
    }
}
