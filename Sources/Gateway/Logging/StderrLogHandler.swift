import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Logging

/// A swift-log handler that writes each record as one ``LogLineFormatter`` line to stderr.
///
/// Unbuffered: each line is handed to `write(2)` as it is logged, so nothing is lost when the process
/// dies and lines of concurrent loggers never interleave. It does not rotate files or talk to journald;
/// systemd collects stderr.
public struct StderrLogHandler: LogHandler {
    /// The shared level, unless this logger was given one of its own.
    public var logLevel: Logger.Level {
        get { ownLevel ?? control?.level ?? .info }
        set { ownLevel = newValue }
    }
    private var ownLevel: Logger.Level?
    private let control: LogControl?
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public let label: String
    public var formatter: LogLineFormatter
    private let output: LineWriter

    public init(
        label: String,
        format: LogFormat,
        level: Logger.Level,
        metadataProvider: Logger.MetadataProvider? = nil
    ) {
        self.init(label: label, format: format, level: level, metadataProvider: metadataProvider, output: .standardError)
    }

    /// Follows `control`: its level (until one is set on the logger) and its forwarding of warnings.
    public init(label: String, format: LogFormat, control: LogControl, metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.formatter = LogLineFormatter(format: format)
        self.control = control
        self.metadataProvider = metadataProvider
        self.output = .standardError
    }

    /// For tests: write to `output` instead of stderr.
    init(label: String, format: LogFormat, level: Logger.Level, metadataProvider: Logger.MetadataProvider?, output: LineWriter) {
        self.label = label
        self.formatter = LogLineFormatter(format: format)
        self.ownLevel = level
        self.control = nil
        self.metadataProvider = metadataProvider
        self.output = output
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadataProvider?.get() ?? [:]
        merged.merge(metadata) { _, new in new }
        if let eventMetadata = event.metadata {
            merged.merge(eventMetadata) { _, new in new }
        }
        let record = LogRecord(
            timestampMilliseconds: Self.now(),
            level: event.level,
            label: label,
            message: event.message.description,
            metadata: merged,
            error: event.error.map { String(describing: $0) }
        )
        output.write(line: formatter.line(for: record))
        control?.forwarded(record)
    }

    private static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }
}

/// Writes whole lines to a file descriptor, one line at a time.
///
/// The file descriptor is not owned (stderr outlives every logger); the lock only keeps the retries of a
/// partial write from interleaving with another thread's line.
final class LineWriter: Sendable {
    static let standardError = LineWriter(fileDescriptor: STDERR_FILENO)

    private let fileDescriptor: CInt
    private let lock = Mutex(())

    init(fileDescriptor: CInt) {
        self.fileDescriptor = fileDescriptor
    }

    func write(line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        lock.withLock { _ in
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { buffer in
                    #if canImport(Darwin)
                    Darwin.write(fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    #elseif canImport(Musl)
                    Musl.write(fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    #else
                    Glibc.write(fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    #endif
                }
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return  // stderr is gone or full; there is nowhere left to report that
                }
            }
        }
    }
}
