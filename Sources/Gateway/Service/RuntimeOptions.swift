import Logging
import Synchronization

/// The gateway's options that `bridge/request/options` changes while it runs, starting from config.yaml. They
/// last until the process ends: config.yaml stays the truth a restart goes back to (device options excepted,
/// which the device store keeps, as `device/options` does).
public final class RuntimeOptions: Sendable {
    /// The level every logger follows: `LogControl.shared` in the daemon, a private one in tests.
    public let log: LogControl
    private let healthInterval: Mutex<Int>

    public init(healthIntervalSeconds: Int, log: LogControl) {
        self.log = log
        healthInterval = Mutex(healthIntervalSeconds)
    }

    public var healthIntervalSeconds: Int {
        get { healthInterval.withLock { $0 } }
        set { healthInterval.withLock { $0 = newValue } }
    }

    public var logLevel: Logger.Level {
        get { log.level }
        set { log.level = newValue }
    }
}
