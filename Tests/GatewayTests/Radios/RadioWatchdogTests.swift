import Testing

@testable import Gateway

/// The radio watchdog as a pure state machine, on instants the test picks: which symptom it sees, which step it takes
/// and when, what cures it, what it reports, and what it never does (reset a radio holding links on silence alone).
@Suite("Radio watchdog")
struct RadioWatchdogTests {
    let start = ContinuousClock.now

    func at(_ seconds: Int) -> ContinuousClock.Instant { start + .seconds(seconds) }

    /// Discovering, wanted, last advertisement at `heard` seconds.
    func scanning(heard: Int?, connected: Int = 0) -> RadioWatchdog.Observation {
        RadioWatchdog.Observation(scanningWanted: true, discovering: true, lastAdvertisement: heard.map(at), connectedDevices: connected)
    }

    func reports(_ actions: [RadioWatchdog.Action]) -> [RadioStatus] {
        actions.compactMap { if case .report(let status) = $0 { status } else { nil } }
    }

    func steps(_ actions: [RadioWatchdog.Action]) -> [RadioWatchdog.Action] {
        actions.filter { if case .report = $0 { false } else { true } }
    }

    @Test("a radio hearing advertisements, or not asked to discover, is left alone")
    func healthy() {
        var watchdog = RadioWatchdog(now: at(0))
        for second in stride(from: 0, through: 600, by: 5) {
            #expect(watchdog.observe(scanning(heard: second), at: at(second)).isEmpty)
        }
        // Not wanted: no discovery, no judgement, however long.
        #expect(watchdog.observe(RadioWatchdog.Observation(lastAdvertisement: at(600)), at: at(2000)).isEmpty)
        #expect(watchdog.status.state == .ok)
        #expect(watchdog.steps == 0)
    }

    @Test("silence for 90 s after hearing someone: discovery restarted; an advertisement after it cures")
    func silenceRestartsDiscovery() {
        var watchdog = RadioWatchdog(now: at(0))
        #expect(watchdog.observe(scanning(heard: 10), at: at(10)).isEmpty)
        #expect(watchdog.observe(scanning(heard: 10), at: at(99)).isEmpty)
        let actions = watchdog.observe(scanning(heard: 10), at: at(100))
        #expect(steps(actions) == [.restartDiscovery])
        #expect(reports(actions).map(\.state) == [.recovering])
        #expect(watchdog.status.symptom == .silent)
        #expect(watchdog.status.step == .restartDiscovery)
        // An advertisement heard before the step is no evidence.
        #expect(watchdog.observe(scanning(heard: 10), at: at(105)).isEmpty)
        let cured = watchdog.observe(scanning(heard: 110), at: at(110))
        #expect(reports(cured).map(\.state) == [.ok])
        #expect(steps(cured).isEmpty)
        #expect(watchdog.steps == 1)
    }

    @Test("silence that outlasts the restart: power-cycled when it holds no link, then failed and retried with a growing wait")
    func silenceEscalates() {
        var watchdog = RadioWatchdog(now: at(0))
        _ = watchdog.observe(scanning(heard: 0), at: at(0))
        #expect(steps(watchdog.observe(scanning(heard: 0), at: at(90))) == [.restartDiscovery])
        #expect(watchdog.observe(scanning(heard: 0), at: at(179)).isEmpty)
        let reset = watchdog.observe(scanning(heard: 0), at: at(180))
        #expect(steps(reset) == [.reset])
        #expect(reports(reset).map(\.step) == [.reset])
        let failed = watchdog.observe(scanning(heard: 0), at: at(270))
        #expect(reports(failed).map(\.state) == [.failed])
        #expect(steps(failed).isEmpty)
        // Retried after 60 s, then 120 s, then 240 s: each a reset (no links), without a new report.
        #expect(watchdog.observe(scanning(heard: 0), at: at(329)).isEmpty)
        #expect(watchdog.observe(scanning(heard: 0), at: at(330)) == [.reset])
        #expect(watchdog.observe(scanning(heard: 0), at: at(449)).isEmpty)
        #expect(watchdog.observe(scanning(heard: 0), at: at(450)) == [.reset])
        #expect(watchdog.observe(scanning(heard: 0), at: at(689)).isEmpty)
        #expect(watchdog.observe(scanning(heard: 0), at: at(690)) == [.reset])
        #expect(watchdog.status.state == .failed)
        #expect(watchdog.steps == 5)
        // An advertisement after the last step cures it.
        #expect(reports(watchdog.observe(scanning(heard: 700), at: at(700))).map(\.state) == [.ok])
    }

    @Test("the wait between retries stops growing at the limit")
    func retryLimit() {
        var watchdog = RadioWatchdog(now: at(0))
        _ = watchdog.observe(scanning(heard: 0), at: at(0))
        var now = 90
        var resets: [Int] = []
        while now < 20_000 {
            if steps(watchdog.observe(scanning(heard: 0), at: at(now))).contains(.reset) { resets.append(now) }
            now += 5
        }
        let gaps = zip(resets.dropFirst(), resets).map { $0 - $1 }
        #expect(gaps.max() == 900)
        #expect(gaps.suffix(3).allSatisfy { $0 == 900 })
    }

    @Test("silence alone never resets a radio holding connected devices: discovery is restarted again instead")
    func silenceKeepsLinks() {
        var watchdog = RadioWatchdog(now: at(0))
        _ = watchdog.observe(scanning(heard: 0, connected: 2), at: at(0))
        #expect(steps(watchdog.observe(scanning(heard: 0, connected: 2), at: at(90))) == [.restartDiscovery])
        let failed = watchdog.observe(scanning(heard: 0, connected: 2), at: at(180))
        #expect(reports(failed).map(\.state) == [.failed])
        #expect(watchdog.status.step == .restartDiscovery)
        #expect(watchdog.observe(scanning(heard: 0, connected: 2), at: at(240)) == [.restartDiscovery])
        // Its links gone, the next retry may reset.
        #expect(watchdog.observe(scanning(heard: 0), at: at(360)) == [.reset])
    }

    @Test("a quiet place is not a fault: nobody heard within 10 minutes before listening, or nobody ever")
    func quietPlace() {
        var never = RadioWatchdog(now: at(0))
        for second in stride(from: 0, through: 1000, by: 5) { #expect(never.observe(scanning(heard: nil), at: at(second)).isEmpty) }
        var longAgo = RadioWatchdog(now: at(0))
        _ = longAgo.observe(RadioWatchdog.Observation(lastAdvertisement: at(0)), at: at(0))
        // Discovery starts 11 minutes after the last advertisement.
        for second in stride(from: 660, through: 2000, by: 5) { #expect(longAgo.observe(scanning(heard: 0), at: at(second)).isEmpty) }
    }

    @Test("discovery wanted but not running for 15 s (stuck InProgress): restarted, then reset even with links, then cured")
    func notDiscovering() {
        var watchdog = RadioWatchdog(now: at(0))
        let stuck = RadioWatchdog.Observation(scanningWanted: true, discovering: false, connectedDevices: 3)
        #expect(watchdog.observe(stuck, at: at(0)).isEmpty)
        #expect(watchdog.observe(stuck, at: at(14)).isEmpty)
        let first = watchdog.observe(stuck, at: at(15))
        #expect(steps(first) == [.restartDiscovery])
        #expect(watchdog.status.symptom == .notDiscovering)
        #expect(steps(watchdog.observe(stuck, at: at(30))) == [.reset])
        var running = stuck
        running.discovering = true
        #expect(reports(watchdog.observe(running, at: at(35))).map(\.state) == [.ok])
    }

    @Test("an adapter switched off for 15 s is powered on at once (a restart cannot bring power back)")
    func unpowered() {
        var watchdog = RadioWatchdog(now: at(0))
        let off = RadioWatchdog.Observation(powered: false)
        #expect(watchdog.observe(off, at: at(0)).isEmpty)
        let actions = watchdog.observe(off, at: at(15))
        #expect(steps(actions) == [.reset])
        #expect(watchdog.status.symptom == .unpowered)
        #expect(reports(watchdog.observe(RadioWatchdog.Observation(), at: at(20))).map(\.state) == [.ok])
    }

    @Test("gone and back: reported at once without a step; discovery asked for again on return when wanted")
    func absent() {
        var watchdog = RadioWatchdog(now: at(0))
        let gone = watchdog.observe(RadioWatchdog.Observation(present: false, scanningWanted: true), at: at(5))
        #expect(reports(gone).map(\.state) == [.absent])
        #expect(steps(gone).isEmpty)
        #expect(watchdog.observe(RadioWatchdog.Observation(present: false, scanningWanted: true), at: at(500)).isEmpty)
        let back = watchdog.observe(RadioWatchdog.Observation(scanningWanted: true), at: at(505))
        #expect(steps(back) == [.restartDiscovery])
        #expect(reports(back).map(\.state) == [.ok])
        // Gone in the middle of a recovery: absent wins; back without anyone discovering: just ok.
        _ = watchdog.observe(RadioWatchdog.Observation(powered: false), at: at(510))
        _ = watchdog.observe(RadioWatchdog.Observation(powered: false), at: at(525))
        #expect(watchdog.status.state == .recovering)
        #expect(reports(watchdog.observe(RadioWatchdog.Observation(present: false), at: at(526))).map(\.state) == [.absent])
        #expect(watchdog.observe(RadioWatchdog.Observation(), at: at(530)) == [.report(watchdog.status)])
        #expect(watchdog.status.state == .ok)
    }

    @Test("a proxy away for a moment while our reset reconnects it stays in its recovery; away past the grace it is absent")
    func resetReconnects() {
        var settings = RadioWatchdog.Settings()
        settings.resetReconnects = true
        var watchdog = RadioWatchdog(settings: settings, now: at(0))
        _ = watchdog.observe(scanning(heard: 0), at: at(0))
        _ = watchdog.observe(scanning(heard: 0), at: at(90))
        #expect(watchdog.observe(scanning(heard: 0), at: at(180)) == [.reset, .report(watchdog.status)])
        let reconnecting = RadioWatchdog.Observation(present: false, lastAdvertisement: at(0))
        #expect(watchdog.observe(reconnecting, at: at(181)).isEmpty)
        // Back and still silent: not cured by coming back, failed once the silence outlasts the reset.
        #expect(watchdog.observe(scanning(heard: 0), at: at(182)).isEmpty)
        #expect(watchdog.status.state == .recovering)
        #expect(reports(watchdog.observe(scanning(heard: 0), at: at(270))).map(\.state) == [.failed])
        // Gone for good after a reset: absent once the grace has passed.
        #expect(watchdog.observe(scanning(heard: 0), at: at(330)) == [.reset])
        #expect(watchdog.observe(reconnecting, at: at(331)).isEmpty)
        #expect(reports(watchdog.observe(reconnecting, at: at(346))).map(\.state) == [.absent])
    }

    @Test("a failed radio takes no step while nobody needs discovery, and resumes when someone does")
    func failedWaitsForDemand() {
        var watchdog = RadioWatchdog(now: at(0))
        _ = watchdog.observe(scanning(heard: 0, connected: 1), at: at(0))
        _ = watchdog.observe(scanning(heard: 0, connected: 1), at: at(90))
        _ = watchdog.observe(scanning(heard: 0, connected: 1), at: at(180))
        #expect(watchdog.status.state == .failed)
        let idle = RadioWatchdog.Observation(lastAdvertisement: at(0), connectedDevices: 1)
        for second in stride(from: 185, through: 1000, by: 5) { #expect(watchdog.observe(idle, at: at(second)).isEmpty) }
        #expect(watchdog.status.state == .failed)
        #expect(watchdog.observe(scanning(heard: 0, connected: 1), at: at(1005)) == [.restartDiscovery])
    }

    @Test("the reasons people read")
    func reasons() {
        let now = ContinuousClock.now
        let silence = Duration.seconds(90)
        #expect(RadioStatus(state: .ok, since: now).reason(kind: .adapter, silence: silence) == nil)
        #expect(RadioStatus(state: .recovering, symptom: .silent, step: .restartDiscovery, since: now).reason(kind: .adapter, silence: silence)
            == "no advertisements for 90 s while discovering; discovery restarted")
        #expect(RadioStatus(state: .failed, symptom: .silent, step: .reset, since: now).reason(kind: .proxy, silence: silence)
            == "no advertisements for 90 s while discovering; reconnected")
        #expect(RadioStatus(state: .recovering, symptom: .unpowered, step: .reset, since: now).reason(kind: .adapter, silence: silence)
            == "the adapter is powered off; powered on")
        #expect(RadioStatus(state: .absent, symptom: .absent, since: now).reason(kind: .proxy, silence: silence) == "the proxy is not connected")
        #expect(RadioStatus(state: .absent, symptom: .absent, since: now).reason(kind: .adapter, silence: silence) == "the adapter is gone from BlueZ")
    }
}
