import Gateway
import Testing
import Wearables

/// One gateway's side of a handover (docs/roaming.md, "Handover"), message by message.
@Suite("Roaming: handing a device over")
struct DeviceHandoverTests {
    let band = "band"
    let cursor: [String: [String: DeviceValue]] = ["sync": ["cursor": .integer(4711)]]

    func assignment(_ gateway: String, _ epoch: UInt64) -> SiteAssignment {
        SiteAssignment(gateway: gateway, epoch: epoch, referee: "a", reason: .stronger)
    }

    @Test func anUnownedDeviceAssignedHereIsHeldAtOnce() {
        var handover = DeviceHandover(gatewayID: "b")
        #expect(handover.assigned(assignment("b", 1), device: band, previousOwner: nil, previousOwnerPresent: false)
                == [.hold(device: band, storage: nil)])
        #expect(handover.holds(band))
        // The echo of the same assignment, or a newer epoch of it, changes nothing.
        #expect(handover.assigned(assignment("b", 2), device: band, previousOwner: "b", previousOwnerPresent: true).isEmpty)
        #expect(handover.holds(band))
    }

    @Test func theOldOwnerReleasesThenPublishesItsCursorsAndTheNewOwnerHoldsWithThem() throws {
        var old = DeviceHandover(gatewayID: "a")
        var new = DeviceHandover(gatewayID: "b")
        _ = old.assigned(assignment("a", 1), device: band, previousOwner: nil, previousOwnerPresent: false)
        // The referee moves the band to b; both see the assignment.
        #expect(old.assigned(assignment("b", 2), device: band, previousOwner: "a", previousOwnerPresent: true)
                == [.release(device: band, epoch: 2)])
        #expect(!old.holds(band))
        #expect(new.assigned(assignment("b", 2), device: band, previousOwner: "a", previousOwnerPresent: true)
                == [.startReleaseTimer(device: band, epoch: 2)])
        #expect(!new.holds(band))
        let published = old.released(device: band, storage: cursor, releasedMilliseconds: 99)
        let handoff = SiteMessages.Handoff(epoch: 2, from: "a", releasedMilliseconds: 99, storage: cursor)
        #expect(published == [.publishHandoff(device: band, handoff)])
        #expect(new.handoffArrived(handoff, device: band) == [.hold(device: band, storage: cursor)])
        #expect(new.holds(band))
        // The timer that was started ends late: nothing more.
        #expect(new.timedOut(device: band, epoch: 2).isEmpty)
    }

    @Test func aHandoffOfAnOlderEpochIsNotTaken() {
        var new = DeviceHandover(gatewayID: "b")
        _ = new.assigned(assignment("b", 5), device: band, previousOwner: "a", previousOwnerPresent: true)
        let stale = SiteMessages.Handoff(epoch: 3, from: "a", releasedMilliseconds: 1, storage: cursor)
        #expect(new.handoffArrived(stale, device: band).isEmpty)
        #expect(!new.holds(band))
    }

    @Test func aHandoffReadBeforeItsAssignmentIsUsedWhenTheAssignmentComes() {
        var new = DeviceHandover(gatewayID: "b")
        let handoff = SiteMessages.Handoff(epoch: 2, from: "a", releasedMilliseconds: 1, storage: cursor)
        #expect(new.handoffArrived(handoff, device: band).isEmpty)
        #expect(new.assigned(assignment("b", 2), device: band, previousOwner: "a", previousOwnerPresent: true)
                == [.hold(device: band, storage: cursor)])
    }

    @Test func withoutAHandoffTheNewOwnerHoldsAfterTheTimeoutWithWhatItHas() {
        var new = DeviceHandover(gatewayID: "b")
        _ = new.assigned(assignment("b", 2), device: band, previousOwner: "a", previousOwnerPresent: true)
        #expect(new.timedOut(device: band, epoch: 1).isEmpty)
        #expect(new.timedOut(device: band, epoch: 2) == [.hold(device: band, storage: nil)])
    }

    @Test func aDeadPreviousOwnerIsNotWaitedFor() {
        var new = DeviceHandover(gatewayID: "b")
        #expect(new.assigned(assignment("b", 2), device: band, previousOwner: "a", previousOwnerPresent: false)
                == [.hold(device: band, storage: nil)])
        var waiting = DeviceHandover(gatewayID: "c")
        _ = waiting.assigned(assignment("c", 3), device: band, previousOwner: "a", previousOwnerPresent: true)
        #expect(waiting.gatewayLeft("x").isEmpty)
        #expect(waiting.gatewayLeft("a") == [.hold(device: band, storage: nil)])
    }

    @Test func aDeviceMovedOnBeforeItsHandoffCameIsForgotten() {
        var middle = DeviceHandover(gatewayID: "b")
        _ = middle.assigned(assignment("b", 2), device: band, previousOwner: "a", previousOwnerPresent: true)
        #expect(middle.assigned(assignment("c", 3), device: band, previousOwner: "b", previousOwnerPresent: true).isEmpty)
        #expect(middle.handoffArrived(SiteMessages.Handoff(epoch: 2, from: "a", releasedMilliseconds: 1, storage: cursor),
                                      device: band).isEmpty)
        #expect(!middle.holds(band))
        // Nothing is published for a device this gateway never held.
        #expect(middle.released(device: band, storage: cursor, releasedMilliseconds: 2).isEmpty)
    }

    @Test func aHeldDeviceRemovedFromTheRegistryIsReleasedWithoutAHandoff() {
        var owner = DeviceHandover(gatewayID: "a")
        _ = owner.assigned(assignment("a", 1), device: band, previousOwner: nil, previousOwnerPresent: false)
        #expect(owner.removed(device: band) == [.release(device: band, epoch: 1)])
        #expect(owner.released(device: band, storage: cursor, releasedMilliseconds: 1).isEmpty)
    }

    @Test func aGatewayIgnoresItsOwnHandoff() {
        var old = DeviceHandover(gatewayID: "a")
        _ = old.assigned(assignment("a", 1), device: band, previousOwner: nil, previousOwnerPresent: false)
        _ = old.assigned(assignment("b", 2), device: band, previousOwner: "a", previousOwnerPresent: true)
        let handoff = SiteMessages.Handoff(epoch: 2, from: "a", releasedMilliseconds: 1, storage: cursor)
        #expect(old.released(device: band, storage: cursor, releasedMilliseconds: 1) == [.publishHandoff(device: band, handoff)])
        #expect(old.handoffArrived(handoff, device: band).isEmpty)
        // Back to a at epoch 3: b held it (present), so a waits for b's handoff, not for its own old one.
        #expect(old.assigned(assignment("a", 3), device: band, previousOwner: "b", previousOwnerPresent: true)
                == [.startReleaseTimer(device: band, epoch: 3)])
    }
}
