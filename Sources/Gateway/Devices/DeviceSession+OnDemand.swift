import BlueZ
import DBus
import EventLoop
import Synchronization
import Wearables

/// The link on demand (`link: on_demand`, or `auto` for a device that only syncs while an ESPHome proxy serves it):
/// the session connects when `OnDemandVisits` wants the link — every `sync_every_s`, for a command, `connect` or a
/// firmware update — syncs on the periodic visit, and lets the link go once it has been quiet for a while, so the
/// radio's slot serves another device in between. Between visits the device stays available (`link.state` `idle`):
/// its last values hold, and a command brings the link back.
extension DeviceSession {
    /// How long a command waits for the visit it started to connect: discovery (20 s) and a connection (20 s).
    static let visitWait = Duration.seconds(45)

    /// Returns when the link is wanted: at once unless the link is on demand and nothing asks for it.
    func waitForVisit() async {
        while visits != nil, !Task.isCancelled {
            let now = time.now
            guard let plan = visits, !plan.wantsLink(at: now), lifecycle.update == .none else { return }
            // `auto` holds the link where slots are many: a radio other than a proxy serves the device now.
            let auto = device.options.link == .auto
            if auto, let radio = adapter(), !radioIsShared(radio.path) { return }
            await wakes.wait(until: auto ? min(plan.nextVisit, now + .seconds(5)) : plan.nextVisit)
        }
    }

    /// Counts the attempt, tells a command waiting for it, and answers whether the visit it began syncs.
    func attemptOver(connected: Bool) -> Bool {
        attempts &+= 1
        defer { attemptEnded.signal() }
        guard visits != nil else { return false }
        if connected {
            let periodic = visits?.connected(at: time.now) ?? false
            publishLink()
            // Only a link that is let go syncs by itself: `auto` holding the link (a radio with slots to spare) leaves
            // syncing to the user, as `always` does.
            let letGo = devicePath().map(givesLinkBack) ?? false
            return periodic && letGo && type(of: driver).driverDescription.command(DeviceCommand.sync(since: nil, until: nil).name) != nil
        }
        if visits?.phase != .unreachable {
            visits?.attemptFailed()
            publishLink()
        }
        return false
    }

    /// The visit on a connected link: the periodic sync, then the link let go once quiet — unless the device is held
    /// (`auto` on a radio with slots to spare). Returns when the link is down.
    func visit(_ link: DeviceLink, path: ObjectPath, syncs: Bool) async {
        if syncs { await syncOnVisit() }
        while !Task.isCancelled, link.isConnected, visits != nil, givesLinkBack(path) {
            visits?.noteActivity(at: lastReport.instant)
            guard let plan = visits else { break }
            let now = time.now
            guard let letGo = plan.letGoTime() else {
                // A command runs: look again when it ends.
                await visitNews.wait(until: now + plan.linger)
                continue
            }
            guard now >= letGo, lifecycle.update == .none else {
                await visitNews.wait(until: max(letGo, now + .seconds(1)))
                continue
            }
            visits?.letGo()
            publishLink()
            do throws(BlueZError) {
                try await bluez.disconnect(path)
                break
            } catch {
                logger.warning("could not let the link go; trying again", metadata: ["device": "\(device.id)", "error": "\(error)"])
                _ = visits?.connected(at: time.now)
                publishLink()
            }
        }
        await link.waitForDisconnection()
    }

    /// The periodic visit's sync, in turn with the commands.
    private func syncOnVisit() async {
        do throws(CommandError) {
            _ = try await whileSessionStarts { () async throws(CommandError) -> DeviceValue in
                try await execute(.sync(since: nil, until: nil))
            }
            visits?.periodicSynced()
        } catch {
            logger.notice("the visit's sync did not complete", metadata: ["device": "\(device.id)", "error": "\(error)"])
        }
    }

    /// Runs `body` again while it answers `BUSY` (a driver still starting its session on a link just up), a few times
    /// two seconds apart, as a client would.
    func whileSessionStarts(_ body: () async throws(CommandError) -> DeviceValue) async throws(CommandError) -> DeviceValue {
        var attempt = 1
        while true {
            do throws(CommandError) {
                return try await body()
            } catch where error.code == .busy && attempt < Self.startAttempts && !Task.isCancelled {
                attempt += 1
                try? await time.sleep(for: .seconds(2))
            }
        }
    }

    static let startAttempts = 5

    /// Whether the link is let go after a visit, on the radio at `path`.
    func givesLinkBack(_ path: ObjectPath) -> Bool {
        switch device.options.link {
        case .always: false
        case .onDemand: true
        case .auto:
            type(of: driver).driverDescription.onlySyncs
                && bluez.model.devices[path].map { radioIsShared($0.adapter) } ?? false
        }
    }

    /// The link for a command: the current one, or on demand the one the visit the command asked for brings up
    /// (`broughtUp`).
    func linkForCommand() async throws(CommandError) -> (link: DeviceLink, broughtUp: Bool) {
        if let link, state == .connected { return (link, false) }
        guard visits != nil, lifecycle.mayConnect else {
            throw CommandError(.deviceDisconnected, "\(device.id) is not connected; the command was not sent")
        }
        let asked = attempts
        let deadline = time.now + Self.visitWait
        while !Task.isCancelled, time.now < deadline {
            if let link, state == .connected { return (link, true) }
            if attempts != asked, state != .connecting {
                throw CommandError(.deviceDisconnected, "\(device.id) could not be reached for the command; it was not sent")
            }
            await attemptEnded.wait(until: deadline)
        }
        throw CommandError(.deviceDisconnected, "\(device.id) did not connect within \(Self.visitWait); the command was not sent")
    }

    /// A command is over: it counts as activity, and a code shown on the device keeps the link for the user to type.
    func commandEnded(_ command: DeviceCommand) {
        guard visits != nil else { return }
        visits?.commandEnded(at: time.now)
        switch command.name {
        case PairingMethod.showCodeCommand: visits?.hold(until: time.now + OnDemandVisits.codeEntryHold)
        case PairingMethod.confirmCodeCommand: visits?.releaseHold()
        default: break
        }
        visitNews.signal()
    }

    /// `connect` on demand: a visit now.
    func visitRequested() {
        visits?.visitRequested()
    }

    /// The state document's `link`: how the link is held now, and on demand its phase and next periodic visit.
    func publishLink() {
        guard let plan = visits, let phase = plan.phase else { return }
        let onDemand = device.options.link == .onDemand || devicePath().map(givesLinkBack) ?? (device.options.link != .always)
        guard onDemand else { return output(.link(nil)) }
        let untilNext = plan.nextVisit - time.now
        output(.link(.object([
            "mode": .text(LinkMode.onDemand.rawValue), "state": .text(phase.rawValue),
            "next_visit_ts": .integer(time.unixMilliseconds + max(0, untilNext.milliseconds)),
        ])))
    }
}

/// The last moment something reached a link's emit closure, which runs off the session's actor.
final class ReportClock: Sendable {
    private let last: Mutex<ContinuousClock.Instant>

    init(_ start: ContinuousClock.Instant) { last = Mutex(start) }

    func note(_ instant: ContinuousClock.Instant) { last.withLock { $0 = max($0, instant) } }

    var instant: ContinuousClock.Instant { last.withLock { $0 } }
}

extension Duration {
    fileprivate var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
