/// One thing told to systemd over `$NOTIFY_SOCKET` (sd_notify(3)) for a `Type=notify` unit; several share a
/// datagram, one `KEY=value` per line (`message`).
///
/// There is no `RELOADING=1`: the daemon has no reload (a changed configuration takes a restart), and systemd would
/// wait for a `READY=1` that a reload never sends.
public enum SystemdNotification: Sendable, Equatable {
    /// Start-up is finished: systemd lets units ordered after us start and `systemctl start` return.
    case ready
    /// The line `systemctl status` shows.
    case status(String)
    /// The keep-alive that `WatchdogSec=` expects; see `WatchdogSettings`.
    case watchdog
    /// Graceful shutdown began.
    case stopping

    /// The `KEY=value` line. A status is made one line (a newline would end the assignment and start another):
    /// each run of line breaks becomes one space.
    public var assignment: String {
        switch self {
        case .ready: "READY=1"
        case .status(let text): "STATUS=" + Self.oneLine(text)
        case .watchdog: "WATCHDOG=1"
        case .stopping: "STOPPING=1"
        }
    }

    /// The datagram's text for `notifications`, in order.
    public static func message(_ notifications: [SystemdNotification]) -> String {
        notifications.map(\.assignment).joined(separator: "\n")
    }

    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: { $0.isNewline || $0 == "\0" })
            .joined(separator: " ")
    }
}
