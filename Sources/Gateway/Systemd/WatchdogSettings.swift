/// What systemd's watchdog asks of this process, read from the environment it starts us with (sd_watchdog_enabled(3)):
/// `WATCHDOG_USEC` is the `WatchdogSec=` deadline; `WATCHDOG_PID`, when set, names the one process it is meant for
/// (a child that inherited the environment must not ping for its parent).
public enum WatchdogSettings {
    /// How often to send `WATCHDOG=1`: half the deadline, as systemd recommends, so one late ping is not fatal.
    /// Nil when there is no watchdog for this process.
    public static func pingInterval(environment: [String: String], pid: Int32) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let microseconds = UInt64(text), microseconds > 0 else { return nil }
        if let owner = environment["WATCHDOG_PID"], Int32(owner) != pid { return nil }
        return .microseconds(microseconds / 2)
    }
}
