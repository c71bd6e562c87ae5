#if canImport(Glibc)
import Glibc
#endif
import EventLoop
import Logging
import ServiceLifecycle
import Synchronization

/// systemd `Type=notify` for the daemon (docs/architecture.md): `READY=1` once the gateway is up, `STATUS=` when its
/// line changes, `WATCHDOG=1` from the data-path event loop, `STOPPING=1` when graceful shutdown begins.
///
/// The watchdog pings are a timer of the data-path loop, not a task: the loop is what must never stall (every
/// notification socket and the broker's socket are on it), so a loop that hangs stops the pings and systemd restarts
/// the service; a ping from anywhere else would prove only that some other thread still runs.
///
/// Run it as the last service of the group, so graceful shutdown (which goes in reverse order) reaches it first and
/// `STOPPING=1` goes out as the gateway starts letting go. It does not end the process or change what the gateway
/// does; without `NOTIFY_SOCKET` there is nothing to build (`init` answers nil).
public final class SystemdSupervisor: Service, Sendable {
    private let socket: NotifySocket
    private let loop: EventLoop
    private let pingInterval: Duration?
    private let status: @Sendable () async -> ServiceStatus
    private let state = Mutex(SupervisionState())
    private let logger: Logger
    /// How often the status is looked at; it is sent only when its line changed.
    private let statusInterval: Duration

    /// - Parameters:
    ///   - loop: the data-path loop, where the watchdog pings are sent.
    ///   - status: the gateway's status now (`GatewayService.status()`).
    public init?(environment: [String: String], loop: EventLoop, logger: Logger, statusInterval: Duration = .seconds(1),
                 status: @escaping @Sendable () async -> ServiceStatus) {
        guard let socket = NotifySocket(environment: environment) else { return nil }
        self.socket = socket
        self.loop = loop
        self.logger = logger
        self.status = status
        self.statusInterval = statusInterval
        pingInterval = WatchdogSettings.pingInterval(environment: environment, pid: getpid())
    }

    public func run() async throws {
        if let pingInterval {
            logger.info("systemd watchdog: pinging from the data-path loop", metadata: ["interval": "\(pingInterval)"])
            loop.execute { [self] in ping(every: pingInterval) }
        }
        await withGracefulShutdownHandler {
            try? await cancelWhenGracefulShutdown { [self] in
                while !Task.isCancelled {
                    let now = await status()
                    let (notifications, ready) = state.withLock { state in (state.observe(now), state.hasSentReady) }
                    send(notifications)
                    // Until ready, looked at every 20 ms: READY=1 ends `systemctl start` (and starts what is ordered
                    // after the unit), so a second's poll would be a second added to every start.
                    try await Task.sleep(for: ready ? statusInterval : .milliseconds(20))
                }
            }
        } onGracefulShutdown: { [self] in
            send(state.withLock { $0.beginStopping() })
        }
    }

    /// On the loop thread: a ping now and the next one armed; the chain ends with the loop.
    private func ping(every interval: Duration) {
        send([.watchdog])
        loop.schedule(at: .now + interval) { [self] in ping(every: interval) }
    }

    private func send(_ notifications: [SystemdNotification]) {
        if let error = socket.send(notifications) {
            logger.debug("cannot notify systemd", metadata: ["error": "\(String(cString: strerror(error)))"])
        }
    }
}
