@testable import Gateway
import EventLoop
import Logging
import MQTT
import Testing
import Wear2MQTTTesting
import Wearables

/// A gateway's holds and releases happen in the order the broker's assignments asked for them, however long a release
/// takes: a device assigned away and back at once ends held here, released by nobody afterwards. (With a task per
/// action the hold could run before, or in the middle of, the release that came first.) The coordinator is fed the
/// site's records as the broker delivers them, with a device manager that records what it is asked; time is a
/// `ManualClock` the tests advance once the release is under way and the timers are set, then they await `drained()`.
@Suite("Roaming: a gateway's holds and releases in the order they were asked for")
struct SiteHandoverOrderTests {
    /// The releases take longer than the release timeout.
    static let settings = RoamingSettings(lostAfter: .seconds(8), releaseTimeout: .milliseconds(100))
    let topics = SiteTopics(base: "home")

    /// A device manager that records each hold and the start and end of each release; a release takes `releaseTakes`
    /// of the clock's time (a session committing its last page, then disconnecting).
    actor RecordingDevices: SiteDeviceControl {
        private(set) var events: [String] = []
        let releaseTakes: Duration
        let time: TimeSource

        init(releaseTakes: Duration, time: TimeSource) {
            self.releaseTakes = releaseTakes
            self.time = time
        }

        var managedDevices: [ManagedDevice] { [] }
        func device(_ id: String) -> ManagedDevice? { nil }
        func connectionState(id: String) -> ConnectionState { .disconnected }
        func hold(id: String, storage entries: [String: [String: DeviceValue]]?) { events.append("hold \(id)") }
        func release(id: String, sharingCredentials: Bool, commitWait: Duration) async -> [String: [String: DeviceValue]] {
            events.append("release \(id) began")
            try? await time.sleep(for: releaseTakes)
            events.append("release \(id) ended")
            return [:]
        }
        func adopt(_ device: ManagedDevice) {}
        func remove(id: String, announce: Bool) throws(CommandError) {}
    }

    func gateway(_ id: String, on clock: ManualClock, releaseTakes: Duration = .milliseconds(300)) -> (SiteCoordinator, RecordingDevices) {
        let site = SiteCoordinator(gatewayID: id, room: id, settings: Self.settings, layout: TopicLayout(base: "home"),
                                   sharesCredentials: false, sink: RecordingSink(), time: clock.timeSource, logger: Logger(label: "test"))
        let devices = RecordingDevices(releaseTakes: releaseTakes, time: clock.timeSource)
        site.attach(devices)
        for gateway in ["bedroom", "kitchen", "living"] {
            let record = SiteMessages.GatewayRecord(room: gateway, startedMilliseconds: 0, version: "test")
            #expect(site.receive(message(topics.gateway(gateway), SiteMessages.encode(record))))
        }
        return (site, devices)
    }

    func message(_ topic: String, _ payload: [UInt8]) -> IncomingMessage {
        IncomingMessage(topic: topic, payload: payload, qos: .atLeastOnce, retain: true, properties: MQTTProperties())
    }

    /// The referee's assignment of the strap, delivered to each of `sites` in turn (the broker's one order).
    func assign(_ gateway: String, epoch: UInt64, _ reason: SiteAssignment.Reason, to sites: SiteCoordinator...) {
        let assignment = SiteAssignment(gateway: gateway, epoch: epoch, referee: "bedroom", reason: reason)
        for site in sites { #expect(site.receive(message(topics.owner("strap"), SiteMessages.encode(assignment, sinceMilliseconds: 0)))) }
    }

    func handoff(epoch: UInt64, from gateway: String, to sites: SiteCoordinator...) {
        let handoff = SiteMessages.Handoff(epoch: epoch, from: gateway, releasedMilliseconds: 0, storage: [:])
        for site in sites { #expect(site.receive(message(topics.handoff("strap"), SiteMessages.encode(handoff)))) }
    }

    /// Kitchen → living → kitchen, living counted gone by the time of the third: the kitchen holds again at once, after
    /// its release of the second has finished.
    @Test func aDeviceAssignedAwayAndBackAtOnceEndsHeldByTheLastAssignee() async {
        let clock = ManualClock()
        let (kitchen, kitchenDevices) = gateway("kitchen", on: clock)
        let (living, livingDevices) = gateway("living", on: clock)
        assign("kitchen", epoch: 1, .unowned, to: kitchen, living)
        assign("living", epoch: 2, .stronger, to: kitchen, living)
        assign("kitchen", epoch: 3, .ownerGone, to: kitchen, living)
        // The kitchen's release is under way and living's release timer is set; the hold waits behind the release.
        #expect(await clock.sleepers(atLeast: 2))
        #expect(await kitchenDevices.events == ["hold strap", "release strap began"])
        await clock.advance(by: .milliseconds(300))
        await kitchen.drained()
        await living.drained()
        #expect(await kitchenDevices.events == ["hold strap", "release strap began", "release strap ended", "hold strap"])
        #expect(kitchen.heldDevices == ["strap"] && kitchen.publishesSamples(of: "strap", at: .now))
        // Living waited for a handoff that never came, and was assigned away before its timer ran out.
        #expect(await livingDevices.events == [])
        #expect(living.heldDevices.isEmpty)
    }

    /// The same walk with living still present: the kitchen waits for living's handoff, which never comes (living
    /// never held the strap), and holds when its timer runs out — which happens while the release is still under way,
    /// and is carried out after it.
    @Test func aReleaseTimerThatRunsOutDuringTheReleaseHoldsAfterIt() async {
        let clock = ManualClock()
        let (kitchen, kitchenDevices) = gateway("kitchen", on: clock)
        assign("kitchen", epoch: 1, .unowned, to: kitchen)
        assign("living", epoch: 2, .stronger, to: kitchen)
        assign("kitchen", epoch: 3, .stronger, to: kitchen)
        #expect(kitchen.heldDevices.isEmpty)
        // The release and the timer both sleep; the timer runs out first, the release ends 200 ms later.
        #expect(await clock.sleepers(atLeast: 2))
        await clock.advance(by: .milliseconds(300))
        await kitchen.drained()
        #expect(await kitchenDevices.events == ["hold strap", "release strap began", "release strap ended", "hold strap"])
        #expect(kitchen.heldDevices == ["strap"])
    }

    /// A timer for an epoch no longer awaited does nothing: the handoff came first.
    @Test func aReleaseTimerOfAnEpochNoLongerAwaitedDoesNothing() async {
        let clock = ManualClock()
        let (living, livingDevices) = gateway("living", on: clock)
        assign("kitchen", epoch: 1, .unowned, to: living)
        assign("living", epoch: 2, .stronger, to: living)
        handoff(epoch: 2, from: "kitchen", to: living)
        assign("kitchen", epoch: 3, .stronger, to: living)
        assign("living", epoch: 4, .stronger, to: living)
        handoff(epoch: 4, from: "kitchen", to: living)
        // The release sleeps, and the timer of epoch 4 (which replaced epoch 2's).
        #expect(await clock.sleepers(atLeast: 2))
        await clock.advance(by: .milliseconds(300))
        await living.drained()
        #expect(await livingDevices.events == ["hold strap", "release strap began", "release strap ended", "hold strap"])
        #expect(living.heldDevices == ["strap"])
    }
}
