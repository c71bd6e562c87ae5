import Synchronization
import Logging

/// Installs ``StderrLogHandler`` as the process-wide swift-log backend.
public enum LoggingSetup {
    /// swift-log traps on a second `LoggingSystem.bootstrap`, so we remember the first.
    private static let isBootstrapped = Mutex(false)

    /// Makes every `Logger` write `format` lines to stderr at `level` and above (`LogControl.shared` changes it later). Only the first call has an
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
            LogControl.shared.level = level
            LoggingSystem.bootstrap(
                { label, provider in
                    StderrLogHandler(label: label, format: format, control: .shared, metadataProvider: provider)
                },
                metadataProvider: metadataProvider
            )
            return true
        }
    }
}
