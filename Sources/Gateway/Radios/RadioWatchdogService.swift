import EventLoop
import Logging
import Synchronization

/// Looks at every radio every few seconds, runs each one's `RadioWatchdog`, takes the steps it answers and hands
/// every status change to `report` (the gateway publishes it); `watching` hears of radios watched for the first time. Radios come from `radios` at each look, so an adapter
/// plugged in later is watched too; one once seen stays watched while it is gone.
public final class RadioWatchdogService: Sendable {
    public typealias Report = @Sendable (_ radio: any WatchedRadio, _ status: RadioStatus, _ step: RadioWatchdog.Step?) -> Void

    private struct Watched {
        var radio: any WatchedRadio
        var machine: RadioWatchdog
        var advertisements: UInt64?
        var lastAdvertisement: ContinuousClock.Instant?
    }

    public let settings: RadioWatchdog.Settings
    public let interval: Duration
    private let radios: @Sendable () -> [any WatchedRadio]
    private let time: TimeSource
    private let logger: Logger
    private let report: Report
    private let watching: @Sendable () -> Void
    private let watched = Mutex<[String: Watched]>([:])

    public init(settings: RadioWatchdog.Settings, interval: Duration = .seconds(5), time: TimeSource = .system,
                logger: Logger, radios: @escaping @Sendable () -> [any WatchedRadio], report: @escaping Report,
                watching: @escaping @Sendable () -> Void = {}) {
        self.watching = watching
        self.settings = settings
        self.interval = interval
        self.radios = radios
        self.time = time
        self.logger = logger
        self.report = report
    }

    /// Every radio's status now, by id, with its kind.
    public var statuses: [String: (kind: RadioKind, status: RadioStatus)] {
        watched.withLock { $0.mapValues { ($0.radio.kind, $0.machine.status) } }
    }

    /// Looks until the task is cancelled.
    public func run() async {
        while !Task.isCancelled {
            await lookOnce()
            do { try await time.sleep(for: interval) } catch { return }
        }
    }

    /// One look at every radio, its steps taken before the next radio's look.
    public func lookOnce() async {
        let now = time.now
        var added = false
        for radio in radios() {
            watched.withLock { known in
                if known[radio.id] == nil {
                    var settings = settings
                    settings.resetReconnects = radio.kind == .proxy
                    known[radio.id] = Watched(radio: radio, machine: RadioWatchdog(settings: settings, now: now))
                    added = true
                }
            }
        }
        if added { watching() }
        for radio in watched.withLock({ $0.values.map(\.radio) }).sorted(by: { $0.id < $1.id }) {
            let look = await radio.look()
            let now = time.now
            let actions = watched.withLock { known -> [RadioWatchdog.Action] in
                guard var entry = known[radio.id] else { return [] }
                if let seen = entry.advertisements, seen != look.advertisements { entry.lastAdvertisement = now }
                entry.advertisements = look.advertisements
                let observation = RadioWatchdog.Observation(
                    present: look.present, powered: look.powered, scanningWanted: look.scanningWanted,
                    discovering: look.discovering, lastAdvertisement: entry.lastAdvertisement,
                    connectedDevices: look.connectedDevices)
                let actions = entry.machine.observe(observation, at: now)
                known[radio.id] = entry
                return actions
            }
            var step: RadioWatchdog.Step?
            for action in actions {
                switch action {
                case .restartDiscovery: step = .restartDiscovery
                case .reset: step = .reset
                case .report: break
                }
            }
            for action in actions {
                if case .report(let status) = action {
                    let reason = status.reason(kind: radio.kind, silence: settings.silence) ?? "working again"
                    let level: Logger.Level = status.state == .ok ? .info : .warning
                    logger.log(level: level, "radio \(status.state.rawValue)", metadata: ["radio": "\(radio.id)", "reason": "\(reason)"])
                    report(radio, status, step)
                }
            }
            switch step {
            case .restartDiscovery?: await radio.restartDiscovery()
            case .reset?: await radio.reset()
            case nil: break
            }
            if let step, !actions.contains(where: { if case .report = $0 { true } else { false } }) {
                // A retry of a failed radio: no change of state, but a step worth a line and a count.
                logger.warning("radio still failing; trying again", metadata: ["radio": "\(radio.id)", "step": "\(step.rawValue)"])
                report(radio, watched.withLock { $0[radio.id]!.machine.status }, step)
            }
        }
    }
}
