import Synchronization
import Logging

/// Installs ``StderrLogHandler`` as the process-wide swift-log backend.
public enum LoggingSetup {
    /// swift-log traps on a second `LoggingSystem.bootstrap`, so we remember the first.
    private static let isBootstrapped = Mutex(false)

    /// Makes every `Logger` write `format` lines to stderr at `level` and above. Only the first call has an
    /// effect (swift-log allows one bootstrap per process); it returns whether this call was that one.
    @discardableResult
    public static func bootstrap(
        format: LogFormat,
        level: Logger.Level,
        metadataProvider: Logger.MetadataProvider? = nil
    ) -> Bool {
        isBootstrapped.withLock { isBootstrapped in
            guard !isBootstrapped else { return false }
            isBootstrapped = true
            LoggingSystem.bootstrap(
                { label, provider in
                    StderrLogHandler(label: label, format: format, level: level, metadataProvider: provider)
                },
                metadataProvider: metadataProvider
            )
            return true
        }
    }
}
