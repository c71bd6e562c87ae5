/// What to tell systemd as the gateway's status changes (pure; `SystemdSupervisor` sends it): `READY=1` once, the
/// first time the status is ready; `STATUS=` only when its line changed; `STOPPING=1` once, and nothing after it but
/// watchdog pings (which `SystemdSupervisor` sends on its own).
public struct SupervisionState: Sendable {
    private var readySent = false
    private var lastStatus: String?
    private var stopping = false

    public init() {}

    /// Whether `READY=1` went out: until then the status is looked at often, so systemd hears it soon after it holds.
    public var hasSentReady: Bool { readySent }

    public mutating func observe(_ status: ServiceStatus) -> [SystemdNotification] {
        guard !stopping else { return [] }
        var notifications: [SystemdNotification] = []
        let line = status.summary
        if line != lastStatus {
            lastStatus = line
            notifications.append(.status(line))
        }
        if status.isReady && !readySent {
            readySent = true
            notifications.append(.ready)
        }
        return notifications
    }

    public mutating func beginStopping() -> [SystemdNotification] {
        guard !stopping else { return [] }
        stopping = true
        return [.stopping]
    }
}
