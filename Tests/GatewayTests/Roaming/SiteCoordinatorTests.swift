@testable import Gateway
import EventLoop
import Logging
import MQTT
import Testing
import Wear2MQTTTesting

/// `SiteCoordinator` fed the site's records as the broker would deliver them, on its own (no device manager): what a
/// gateway cut off the network and back again may publish, and how soon an owner counted gone is replaced. Both were
/// found by `RoamingSiteFaultTests` (an owner stopped with SIGSTOP).
@Suite("Roaming: a gateway's coordinator after an owner is cut off")
struct SiteCoordinatorTests {
    static let settings = RoamingSettings(lostAfter: .seconds(8), releaseTimeout: .seconds(5))
    let topics = SiteTopics(base: "home")

    func coordinator(_ id: String) -> SiteCoordinator {
        SiteCoordinator(gatewayID: id, room: id, settings: Self.settings, layout: TopicLayout(base: "home"), sharesCredentials: false,
                        sink: RecordingSink(), time: .system(wallClockFixedAt: 1_764_150_000_000), logger: Logger(label: "test"))
    }

    func message(_ topic: String, _ payload: [UInt8]) -> IncomingMessage {
        IncomingMessage(topic: topic, payload: payload, qos: .atLeastOnce, retain: true, properties: MQTTProperties())
    }

    func present(_ gateways: [String], to site: SiteCoordinator) {
        for gateway in gateways {
            let record = SiteMessages.GatewayRecord(room: gateway, startedMilliseconds: 0, version: "test")
            #expect(site.receive(message(topics.gateway(gateway), SiteMessages.encode(record))))
        }
    }

    func assign(_ gateway: String, epoch: UInt64, _ reason: SiteAssignment.Reason, to site: SiteCoordinator) {
        let assignment = SiteAssignment(gateway: gateway, epoch: epoch, referee: "bedroom", reason: reason)
        #expect(site.receive(message(topics.owner("strap"), SiteMessages.encode(assignment, sinceMilliseconds: 0))))
    }

    func reportBack(_ gateway: String, to site: SiteCoordinator) {
        let report = SightingReport(gateway: gateway, devices: ["strap": .init(rssi: -60, connected: true)])
        #expect(site.receive(message(topics.sightings(gateway), SiteMessages.encode(report, atMilliseconds: 0))))
    }

    @Test func aGatewayWhoseOwnReportsStoppedComingBackPublishesNoSamplesUntilOneDoes() {
        let kitchen = coordinator("kitchen")
        present(["bedroom", "kitchen", "living"], to: kitchen)
        #expect(!kitchen.publishesSamples(of: "strap", at: .now))
        assign("kitchen", epoch: 1, .unowned, to: kitchen)
        #expect(kitchen.publishesSamples(of: "strap", at: .now))
        reportBack("kitchen", to: kitchen)
        let echoed = ContinuousClock.now
        #expect(kitchen.publishesSamples(of: "strap", at: echoed + .seconds(7)))
        // Stopped for 13 s: what it reads on its return stays unpublished (the site may have replaced it)…
        #expect(!kitchen.publishesSamples(of: "strap", at: echoed + .seconds(13)))
        // …until a report sent since comes back (behind the assignments queued for it, if any).
        reportBack("kitchen", to: kitchen)
        #expect(kitchen.publishesSamples(of: "strap", at: .now))
        // Another gateway's reports say nothing of this one's.
        reportBack("living", to: kitchen)
        #expect(!kitchen.publishesSamples(of: "strap", at: .now + .seconds(13)))
    }

    /// Found by `RoamingSiteFaultTests` under load: the report the kitchen sent just before it was stopped came back
    /// only after its return, and counting its arrival opened the gate for the backlog its sockets kept.
    @Test func aReportSentBeforeTheStopThatArrivesAfterTheReturnDoesNotOpenTheGate() {
        let kitchen = coordinator("kitchen")
        present(["bedroom", "kitchen", "living"], to: kitchen)
        assign("kitchen", epoch: 1, .unowned, to: kitchen)
        let sent = ContinuousClock.now
        kitchen.noteReportSent(atMilliseconds: 1_764_150_000_500, at: sent)
        let report = SightingReport(gateway: "kitchen", devices: ["strap": .init(rssi: -60, connected: true)])
        // 13 s later (the stop), the report arrives.
        #expect(kitchen.receive(message(topics.sightings("kitchen"), SiteMessages.encode(report, atMilliseconds: 1_764_150_000_500))))
        #expect(!kitchen.publishesSamples(of: "strap", at: sent + .seconds(13)))
        // A report sent after the return, come back: the gate opens.
        kitchen.noteReportSent(atMilliseconds: 1_764_150_013_500, at: sent + .seconds(13))
        #expect(kitchen.receive(message(topics.sightings("kitchen"), SiteMessages.encode(report, atMilliseconds: 1_764_150_013_500))))
        #expect(kitchen.publishesSamples(of: "strap", at: sent + .seconds(13)))
    }

    @Test func samplesStopTheMomentTheDeviceIsAssignedAwayBeforeItsSessionHasStopped() {
        let kitchen = coordinator("kitchen")
        present(["bedroom", "kitchen", "living"], to: kitchen)
        assign("kitchen", epoch: 1, .unowned, to: kitchen)
        reportBack("kitchen", to: kitchen)
        assign("living", epoch: 2, .stronger, to: kitchen)
        #expect(!kitchen.publishesSamples(of: "strap", at: .now))
    }

    @Test func anOwnerTheRefereeCountedGoneIsReplacedAtOnceWithoutWaitingForItsHandoff() {
        let living = coordinator("living")
        present(["bedroom", "kitchen", "living"], to: living)
        assign("kitchen", epoch: 1, .unowned, to: living)
        // The kitchen's record stands (its connection is open), but its reports stopped: no handoff will come.
        assign("living", epoch: 2, .ownerGone, to: living)
        #expect(living.heldDevices == ["strap"])
        #expect(living.publishesSamples(of: "strap", at: .now))
    }

    @Test func aStrongerGatewayStillWaitsForThePresentOwnersHandoff() {
        let living = coordinator("living")
        present(["bedroom", "kitchen", "living"], to: living)
        assign("kitchen", epoch: 1, .unowned, to: living)
        assign("living", epoch: 2, .stronger, to: living)
        #expect(living.heldDevices.isEmpty)
        let handoff = SiteMessages.Handoff(epoch: 2, from: "kitchen", releasedMilliseconds: 0, storage: [:])
        #expect(living.receive(message(topics.handoff("strap"), SiteMessages.encode(handoff))))
        #expect(living.heldDevices == ["strap"])
    }
}
