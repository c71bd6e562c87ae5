@testable import Gateway
import Testing

/// When a link on demand is wanted and when it is let go, event by event on instants the test chooses.
@Suite("On-demand visits")
struct OnDemandVisitsTests {
    let start = ContinuousClock.now
    func at(_ seconds: Int) -> ContinuousClock.Instant { start + .seconds(seconds) }

    func plan() -> OnDemandVisits { OnDemandVisits(interval: .seconds(3600), linger: .seconds(10), now: start) }

    @Test("the first visit is at once and syncs; the next is an interval after it, and only that one syncs")
    func periodicVisits() {
        var visits = plan()
        #expect(visits.wantsLink(at: start))
        let periodic1 = visits.connected(at: at(2))
        #expect(periodic1)
        #expect(visits.phase == .visiting)
        #expect(visits.nextVisit == at(3602))
        visits.letGo()
        #expect(visits.phase == .idle)
        #expect(!visits.wantsLink(at: at(3601)))
        #expect(visits.wantsLink(at: at(3602)))
        // A visit for something else before the periodic one is due does not sync and does not move it.
        visits.visitRequested()
        #expect(visits.wantsLink(at: at(100)))
        let periodic2 = visits.connected(at: at(100))
        #expect(!periodic2)
        #expect(!visits.requested)
        #expect(visits.nextVisit == at(3602))
    }

    @Test("let go once the link has been quiet for the linger, counted from the last activity")
    func lingerFromLastActivity() {
        var visits = plan()
        _ = visits.connected(at: at(0))
        #expect(visits.letGoTime() == at(10))
        visits.noteActivity(at: at(7))
        #expect(visits.letGoTime() == at(17))
        // An older report does not move it back.
        visits.noteActivity(at: at(3))
        #expect(visits.letGoTime() == at(17))
    }

    @Test("a command waiting or running wants the link and keeps it; its end starts the quiet time")
    func commandsHoldTheLink() {
        var visits = plan()
        _ = visits.connected(at: at(0))
        visits.letGo()
        #expect(!visits.wantsLink(at: at(60)))
        visits.commandQueued()
        visits.commandQueued()
        #expect(visits.wantsLink(at: at(60)))
        _ = visits.connected(at: at(61))
        #expect(visits.letGoTime() == nil)
        visits.commandEnded(at: at(62))
        #expect(visits.letGoTime() == nil)
        visits.commandEnded(at: at(65))
        #expect(visits.letGoTime() == at(75))
        #expect(!visits.wantsLink(at: at(80)))
        // More ends than starts cannot make the count negative.
        visits.commandEnded(at: at(66))
        #expect(visits.commands == 0)
    }

    @Test("a code shown on the device keeps the link for the user to type it; the confirmation releases it")
    func codeEntryHold() {
        var visits = plan()
        _ = visits.connected(at: at(0))
        visits.hold(until: at(0) + OnDemandVisits.codeEntryHold)
        #expect(visits.letGoTime() == at(120))
        visits.hold(until: at(30))
        #expect(visits.letGoTime() == at(120), "a shorter hold does not cut a longer one")
        visits.noteActivity(at: at(50))
        visits.releaseHold()
        #expect(visits.letGoTime() == at(60))
    }

    @Test("a failed attempt makes the device unreachable and keeps a due visit due (retried after the backoff)")
    func failedAttempts() {
        var visits = plan()
        visits.attemptFailed()
        #expect(visits.phase == .unreachable)
        #expect(visits.wantsLink(at: at(5)))
        // A requested visit that failed is not asked for again by itself.
        _ = visits.connected(at: at(10))
        visits.letGo()
        visits.visitRequested()
        visits.attemptFailed()
        #expect(!visits.wantsLink(at: at(20)))
        let periodic3 = visits.connected(at: at(3610))
        #expect(periodic3)
        #expect(visits.phase == .visiting)
    }

    @Test("a link lost before the periodic visit synced makes that visit due again; after the sync it does not")
    func linkLostDuringAVisit() {
        var visits = plan()
        _ = visits.connected(at: at(2))
        visits.linkLost()
        #expect(visits.phase == .unreachable)
        #expect(visits.wantsLink(at: at(3)), "the sync it missed is retried after the backoff")
        let retried = visits.connected(at: at(5))
        #expect(retried, "and the retry is the periodic visit, which syncs")
        #expect(visits.nextVisit == at(3605))
        visits.periodicSynced()
        visits.linkLost()
        #expect(visits.phase == .idle)
        #expect(!visits.wantsLink(at: at(3604)))
        // A visit for a command that loses its link leaves the periodic one where it was.
        visits.visitRequested()
        _ = visits.connected(at: at(100))
        visits.linkLost()
        #expect(visits.phase == .idle)
        #expect(visits.nextVisit == at(3605))
        // Let go on purpose: the visit is over even when its sync failed, and a loss after it changes nothing.
        _ = visits.connected(at: at(3605))
        visits.letGo()
        visits.linkLost()
        #expect(visits.phase == .idle)
        #expect(visits.nextVisit == at(7205))
    }
}
