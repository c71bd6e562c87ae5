import Logging
import Synchronization

/// What can change about logging while the daemon runs: the level every logger follows (`bridge/request/options`
/// `log_level`), and where warnings and errors are also sent (`bridge/logging`).
///
/// One per process, shared by every ``StderrLogHandler`` that ``LoggingSetup`` makes; a logger whose level was
/// set explicitly (`logger.logLevel = …`) keeps that level.
public final class LogControl: Sendable {
    public static let shared = LogControl(level: .info)

    private let state: Mutex<(level: Logger.Level, forward: (@Sendable (LogRecord) -> Void)?)>

    public init(level: Logger.Level) {
        state = Mutex((level, nil))
    }

    public var level: Logger.Level {
        get { state.withLock { $0.level } }
        set { state.withLock { $0.level = newValue } }
    }

    /// Records at `warning` and above are handed to `forward` too (after stderr); nil stops it.
    public func forwardWarnings(_ forward: (@Sendable (LogRecord) -> Void)?) {
        state.withLock { $0.forward = forward }
    }

    func forwarded(_ record: LogRecord) {
        guard record.level >= .warning, let forward = state.withLock({ $0.forward }) else { return }
        forward(record)
    }
}
