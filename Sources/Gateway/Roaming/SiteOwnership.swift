/// Who owns which device in a site of gateways, as one gateway sees it, and — when this gateway is the referee —
/// the decisions to publish (docs/roaming.md, "Ownership"). A value-level state machine: it is fed the site's
/// retained records, sighting reports and assignments in the order the broker delivers them, with the time, and
/// answers assignments; publishing them, and connecting or letting go of devices, is the caller's.
///
/// It does not smooth what one gateway hears within an interval (the reporter sends the interval's mean), and it
/// never moves a device on a single report: a move needs `hysteresisDuration` of reports that agree.
public struct SiteOwnership: Sendable {
    public let gatewayID: String
    public let settings: RoamingSettings

    /// Gateways whose `gateways/<id>` record is present.
    public private(set) var gateways: Set<String> = []
    /// The referee as of the last record, report or decision: the smallest id among the gateways present and alive
    /// (see `isAlive`). Every gateway computes it from the same retained records and reports, so no vote is needed.
    public private(set) var referee: String?
    /// The managed devices (the registry).
    public private(set) var devices: Set<String> = []
    /// The greatest assignment seen per device, from any referee.
    public private(set) var assignments: [String: SiteAssignment] = [:]

    /// What one gateway hears of one device.
    struct Level: Sendable {
        var smoothed: Double
        var lastHeard: ContinuousClock.Instant
        var connected = false
        var lost = false
    }

    private var levels: [String: [String: Level]] = [:]
    private var lastReport: [String: ContinuousClock.Instant] = [:]
    /// When each present gateway's record appeared: one that has not reported yet is alive for `lostAfter` after.
    private var joined: [String: ContinuousClock.Instant] = [:]
    /// Reports received from each gateway since this one started, and each gateway's view of those counts at its
    /// last report (or its record's arrival): how many reports the others sent while it was silent.
    private var reportCounts: [String: Int] = [:]
    private var countsAtLastSign: [String: [String: Int]] = [:]
    /// A gateway hearing a device better than its owner by the margin, and since when without a break.
    private var challengers: [String: (gateway: String, since: ContinuousClock.Instant)] = [:]
    /// When an unowned device was first heard: it is assigned once every gateway has reported since (or
    /// `lostAfter` later), so the first report to arrive does not win it.
    private var firstHeard: [String: ContinuousClock.Instant] = [:]
    /// Since when this gateway is the referee. A new referee listens for `lostAfter` before it gives out unowned
    /// devices: at a site's start the other gateways' records and reports may not have reached it yet, and the
    /// first gateway it knows of would win every device.
    private var refereeSince: ContinuousClock.Instant?

    public init(gatewayID: String, settings: RoamingSettings = RoamingSettings()) {
        self.gatewayID = gatewayID
        self.settings = settings
    }

    public var isReferee: Bool { referee == gatewayID }

    public func owner(of device: String) -> String? { assignments[device]?.gateway }
    /// Whether this gateway should hold `device` and answer its commands, by the latest assignment it has seen.
    public func owns(_ device: String) -> Bool { owner(of: device) == gatewayID }

    public mutating func setGateways(_ present: Set<String>, at now: ContinuousClock.Instant) {
        for gateway in present.subtracting(gateways) {
            joined[gateway] = now
            countsAtLastSign[gateway] = reportCounts
        }
        for gateway in gateways.subtracting(present) {
            joined[gateway] = nil
            countsAtLastSign[gateway] = nil
        }
        gateways = present
        updateReferee(at: now)
    }

    /// A gateway is alive while its record is present and it is not silent: silent means no report of its own for
    /// `lostAfter` (or, before its first, since its record appeared) *while another gateway's reports kept arriving*
    /// — half a `lostAfter`'s worth of them. The record alone is not enough: it goes only when the broker publishes
    /// the will, 1.5 keepalives after the last packet and up to a keepalive-check period later (mosquitto 2.0 checks
    /// every few seconds), while reports stop the moment a gateway is cut off. So a cut-off referee is replaced after
    /// `lostAfter` whatever the keepalive, and one that returns — the others' queued reports arriving before its own
    /// — is referee again only once its own report has come back (before that it knows only the site of before).
    /// Counting the others' reports, not only the clock, keeps a gateway whose own reading of messages stalled (a
    /// process starved of CPU) from counting everyone silent: their reports stalled with everything else.
    public func isAlive(_ gateway: String, at now: ContinuousClock.Instant) -> Bool {
        guard gateways.contains(gateway) else { return false }
        let lastSign = [lastReport[gateway], joined[gateway]].compactMap { $0 }.max()
        guard let lastSign, now - lastSign > settings.lostAfter else { return true }
        let before = countsAtLastSign[gateway] ?? [:]
        return !reportCounts.contains { other, count in other != gateway && count - (before[other] ?? 0) >= silenceReports }
    }

    /// How many reports of another gateway make a silence of `lostAfter` count: half as many as it sends meanwhile.
    private var silenceReports: Int {
        max(2, Int((settings.lostAfter / settings.reportInterval) / 2))
    }

    /// Settles `referee` at `now`; answers whether it changed.
    @discardableResult
    public mutating func updateReferee(at now: ContinuousClock.Instant) -> Bool {
        let next = gateways.filter { isAlive($0, at: now) }.min()
        defer { referee = next }
        return next != referee
    }

    public mutating func setDevices(_ managed: Set<String>) {
        devices = managed
        for device in assignments.keys where !managed.contains(device) { assignments[device] = nil }
        for device in levels.keys where !managed.contains(device) { levels[device] = nil }
        for device in challengers.keys where !managed.contains(device) { challengers[device] = nil }
        for device in firstHeard.keys where !managed.contains(device) { firstHeard[device] = nil }
    }

    /// Records an assignment read from the broker. Answers whether it is now the one in force (an older one, from
    /// a referee that lost a partition, is ignored).
    @discardableResult
    public mutating func record(_ assignment: SiteAssignment, for device: String) -> Bool {
        if let current = assignments[device], !assignment.supersedes(current) { return current == assignment }
        assignments[device] = assignment
        challengers[device] = nil
        return true
    }

    /// Records one gateway's report. A report lists everything its gateway hears or holds, so a device missing
    /// from it is neither connected to nor heard by that gateway now.
    public mutating func record(_ report: SightingReport, at now: ContinuousClock.Instant) {
        lastReport[report.gateway] = now
        reportCounts[report.gateway, default: 0] += 1
        countsAtLastSign[report.gateway] = reportCounts
        updateReferee(at: now)
        for device in devices {
            guard let sighting = report.devices[device] else {
                levels[device]?[report.gateway]?.connected = false
                levels[device]?[report.gateway]?.lost = false
                continue
            }
            if assignments[device] == nil, firstHeard[device] == nil, sighting.heard > 0 || sighting.connected {
                firstHeard[device] = now
            }
            var level = levels[device]?[report.gateway]
            if sighting.heard > 0 {
                if var known = level, isFresh(known, at: now) {
                    known.smoothed += settings.smoothing * (sighting.rssi - known.smoothed)
                    known.lastHeard = now
                    level = known
                } else {
                    level = Level(smoothed: sighting.rssi, lastHeard: now)
                }
            }
            level?.connected = sighting.connected
            // A link that dropped while the device is still heard is one its gateway reconnects by itself.
            level?.lost = sighting.lost && sighting.heard == 0
            if level == nil, sighting.connected {
                // Connected without having advertised to us since: the last level it reports stands in.
                level = Level(smoothed: sighting.rssi, lastHeard: now, connected: true)
            }
            levels[device, default: [:]][report.gateway] = level
        }
    }

    /// The referee's decisions at `now`: the assignments to publish (already recorded here). Empty on any other
    /// gateway.
    public mutating func decide(at now: ContinuousClock.Instant) -> [String: SiteAssignment] {
        updateReferee(at: now)
        guard isReferee, isCurrent(at: now) else {
            refereeSince = nil
            return [:]
        }
        if refereeSince == nil { refereeSince = now }
        var decided: [String: SiteAssignment] = [:]
        for device in devices.sorted() {
            guard let assignment = decision(for: device, at: now) else { continue }
            record(assignment, for: device)
            decided[device] = assignment
        }
        return decided
    }

    private mutating func decision(for device: String, at now: ContinuousClock.Instant) -> SiteAssignment? {
        // Only gateways of the site now: one whose record is gone (killed, cut off) is no candidate, however fresh
        // its last report.
        let heard = (levels[device] ?? [:]).filter { isAlive($0.key, at: now) && isFresh($0.value, at: now) }
        let epoch = (assignments[device]?.epoch ?? 0) + 1
        func assign(_ gateway: String, _ reason: SiteAssignment.Reason) -> SiteAssignment {
            SiteAssignment(gateway: gateway, epoch: epoch, referee: gatewayID, reason: reason)
        }
        guard let current = assignments[device] else {
            guard !heard.isEmpty, let since = firstHeard[device], let refereeSince,
                  now - refereeSince >= settings.lostAfter else { return nil }
            let everyoneReported = gateways.allSatisfy { gateway in lastReport[gateway].map { $0 >= since } ?? false }
            guard everyoneReported || now - since >= settings.lostAfter else { return nil }
            firstHeard[device] = nil
            return Self.strongest(in: heard).map { assign($0, .unowned) }
        }
        let owner = current.gateway
        if !isAlive(owner, at: now) {
            return Self.strongest(in: heard.filter { $0.key != owner }).map { assign($0, .ownerGone) }
        }
        guard let ownerLevel = heard[owner], !ownerLevel.lost else {
            // The owner holds no link and has not heard the device lately: whoever hears it takes it.
            return Self.strongest(in: heard.filter { $0.key != owner }).map { assign($0, .linkLost) }
        }
        guard let candidate = Self.strongest(in: heard.filter { $0.key != owner }),
              let candidateLevel = heard[candidate],
              candidateLevel.smoothed >= ownerLevel.smoothed + settings.hysteresisDecibels else {
            challengers[device] = nil
            return nil
        }
        guard let challenger = challengers[device], challenger.gateway == candidate else {
            challengers[device] = (candidate, now)
            return nil
        }
        guard now - challenger.since >= settings.hysteresisDuration else { return nil }
        return assign(candidate, .stronger)
    }

    /// Whether this gateway's own last report came back within `lostAfter` (or none has yet). One that was cut off
    /// (stopped, its network gone) knows only the site of before: its levels and owners are old, its reports had
    /// stopped, and the others have counted it gone and may have a referee of their own. Deciding on that picture,
    /// at equal epochs its smaller id would even win. It decides again once a report it sent since has come back
    /// (behind the records the broker kept for it), listening first as a new referee does.
    private func isCurrent(at now: ContinuousClock.Instant) -> Bool {
        lastReport[gatewayID].map { now - $0 <= settings.lostAfter } ?? true
    }

    /// Heard within `lostAfter`, or holding a link.
    private func isFresh(_ level: Level, at now: ContinuousClock.Instant) -> Bool {
        level.connected || now - level.lastHeard <= settings.lostAfter
    }

    /// The highest smoothed level; between equals, the smaller gateway id.
    private static func strongest(in levels: [String: Level]) -> String? {
        levels.min { left, right in
            left.value.smoothed != right.value.smoothed ? left.value.smoothed > right.value.smoothed : left.key < right.key
        }?.key
    }
}
