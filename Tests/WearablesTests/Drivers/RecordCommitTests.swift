import Synchronization
import Testing
import Wear2MQTTTesting
import Wearables

/// A record commit (records out durably, then the cursor past them) against the end of a session: a roaming
/// device's next owner reads the cursor right after the old owner's session stops, so a page half committed then
/// used to be downloaded and published twice (docs/roaming.md, "Continuity").
@Suite("Record commits: a stopping session lets the page in flight finish, then takes no other")
struct RecordCommitTests {
    /// Durable records whose first store waits for the test: the moment a handover used to read the old cursor.
    final class HeldFirstStore: Sendable {
        let reached: AsyncStream<Void>
        private let reachedNow: AsyncStream<Void>.Continuation
        private let release: AsyncStream<Void>
        let releaseNow: AsyncStream<Void>.Continuation
        private let first = Mutex(true)

        init() {
            (reached, reachedNow) = AsyncStream.makeStream(of: Void.self)
            (release, releaseNow) = AsyncStream.makeStream(of: Void.self)
        }

        /// The sync ended: a wait for the first store ends too, whether it came or not (a sync that fails first, on a
        /// loaded machine, then fails the test instead of hanging it).
        func syncEnded() { reachedNow.finish() }

        var records: DurableRecords {
            DurableRecords(handedOver: { 0 }, stored: { [self] _, _ in
                if first.withLock({ first in defer { first = false }; return first }) {
                    reachedNow.yield()
                    for await _ in release { break }
                }
                return true
            })
        }
    }

    @Test("ActiGraph: a stop mid-page waits for that page's cursor; the next page is left on the Link")
    func stopDuringAnActiGraphPage() async throws {
        let store = HeldFirstStore()
        let commits = RecordCommits()
        let storage = DriverStorage.inMemory()
        // The link on a manual clock nobody moves: the sync waits for the session's channel (the driver's 5 s
        // readiness wait) until the session has set it up, however late a loaded machine runs that, not 5 s.
        let link = DriverHarness(ActiGraphDriver.self, peripheral: try simulated("actigraph_link", options: ["epoch_hours": .int(3)]),
                                 configuration: DriverConfiguration(address: .init("C0:A6:00:00:00:01")!, storage: storage),
                                 central: InMemoryCentral(time: ManualClock().timeSource),
                                 durable: store.records, commits: commits)
        try await link.connect()
        let sync = Task { () -> CommandError? in
            defer { store.syncEnded() }
            do throws(CommandError) { _ = try await link.execute(.sync(since: nil, until: nil)) } catch { return error }
            return nil
        }
        var reachedTheStore = false
        for await _ in store.reached {
            reachedTheStore = true
            break
        }
        if !reachedTheStore {
            Issue.record("the sync ended before its first page was stored: \(String(describing: await sync.value))")
            await link.disconnect()
            return
        }

        // The first page's epochs are out and wait to be stored; their cursor is not written yet.
        let firstPage = link.recorder.records
        #expect(!firstPage.isEmpty)
        #expect(storage.load("sync")?["cursor"] == nil)
        let settled = Mutex(false)
        let nothingInFlight = commits.close(whenSettled: { settled.withLock { $0 = true } })
        #expect(!nothingInFlight, "a commit is in flight")
        #expect(!settled.withLock { $0 })

        store.releaseNow.yield()
        let error = await sync.value
        #expect(error?.code == .deviceDisconnected, "the next page is refused: \(String(describing: error))")
        #expect(settled.withLock { $0 })
        // Exactly what went out is behind the cursor: the next owner starts after the first page, and nothing of the
        // second page was published.
        #expect(link.recorder.records.count == firstPage.count)
        let newest = try #require(firstPage.map(\.timestamp).max())
        #expect(storage.load("sync")?["cursor"]?.integer.map { $0 * 1000 } == newest)
        await link.disconnect()
    }

    @Test("a closed gate with nothing in flight settles at once and refuses every commit without emitting")
    func closedGate() async throws {
        let commits = RecordCommits()
        let link = DriverHarness(ActiGraphDriver.self, peripheral: try simulated("actigraph_link"), commits: commits)
        let nothingInFlight = commits.close(whenSettled: { Issue.record("nothing was in flight") })
        #expect(nothingInFlight)
        var advanced = false
        await #expect(throws: CommandError.self) {
            try await link.link.commit([FitnessRecord(kind: "steps", id: "x", timestamp: 0, fields: [:])]) { advanced = true }
        }
        #expect(!advanced)
        #expect(link.recorder.records.isEmpty)
    }
}
