@testable import Gateway
import Testing
import Wearables

/// `SiteRegistry` on its own: what a gateway applies from the site's registry, and what its own device list makes it
/// publish there (docs/roaming.md, "Topics": `registry/<device>`).
@Suite("Roaming: the site's registry as one gateway replicates it")
struct SiteRegistryTests {
    let strap = ManagedDevice(id: "strap", address: "C0:FF:EE:00:00:01", driver: "standard", name: "strap")
    let tag = ManagedDevice(id: "tag", address: "C0:FF:EE:00:00:07", driver: "standard", name: "tag")

    func renamed(_ device: ManagedDevice, _ name: String) -> ManagedDevice {
        var device = device
        device.name = name
        return device
    }

    /// `registry` having read `device`'s entry and the manager having adopted it.
    func adopt(_ device: ManagedDevice, into registry: inout SiteRegistry) throws {
        #expect(try registry.received(device.id, payload: SiteMessages.encode(device)) == .adopt(device))
        registry.adopted(device.id, managing: device)
    }

    @Test func anEntryReadIsAdoptedAndAnEmptyOneRemovesTheDevice() throws {
        var registry = SiteRegistry()
        #expect(try registry.received("strap", payload: SiteMessages.encode(strap)) == .adopt(strap))
        #expect(registry.entries == ["strap": strap])
        #expect(try registry.received("strap", payload: []) == .remove(id: "strap"))
        #expect(registry.entries.isEmpty && registry.deleted == ["strap"])
    }

    @Test func aMalformedEntryChangesNothing() throws {
        var registry = SiteRegistry()
        try adopt(strap, into: &registry)
        let before = registry
        #expect(throws: SiteMessageError.self) { try registry.received("strap", payload: Array("{\"id\":".utf8)) }
        // An entry filed under another device's id is refused too.
        #expect(throws: SiteMessageError.self) { try registry.received("tag", payload: SiteMessages.encode(strap)) }
        #expect(registry == before)
    }

    @Test func aDeviceTheRegistryLacksIsPublishedUntilTheRegistryHasIt() throws {
        var registry = SiteRegistry()
        #expect(registry.publications(for: [strap], readAtAdoptions: 0, asReferee: false) == [.init(id: "strap", entry: strap)])
        // Not read back yet (a message lost with a broker restart): published again at the next report.
        #expect(registry.publications(for: [strap], readAtAdoptions: 0, asReferee: false) == [.init(id: "strap", entry: strap)])
        _ = try registry.received("strap", payload: SiteMessages.encode(strap))
        #expect(registry.publications(for: [strap], readAtAdoptions: 0, asReferee: false).isEmpty)
    }

    @Test func anEntryChangedHereIsPublishedAndAnOlderLocalCopyIsNotPutBack() throws {
        var registry = SiteRegistry()
        try adopt(strap, into: &registry)
        // Renamed here (a bridge request on the referee): the registry gets the new entry.
        let local = renamed(strap, "chest")
        #expect(registry.publications(for: [local], readAtAdoptions: 1, asReferee: true) == [.init(id: "strap", entry: local)])
        // Renamed elsewhere, not adopted yet: this gateway's copy is older, not a change, and stays unpublished.
        var elsewhere = SiteRegistry()
        try adopt(strap, into: &elsewhere)
        _ = try elsewhere.received("strap", payload: SiteMessages.encode(renamed(strap, "wrist")))
        #expect(elsewhere.publications(for: [strap], readAtAdoptions: 1, asReferee: false).isEmpty)
    }

    @Test func aListReadBeforeAnAdoptionPublishesOnlyMissingDevices() throws {
        var registry = SiteRegistry()
        try adopt(strap, into: &registry)
        let read = registry.adoptions
        // Adopted between reading the list and publishing: the list's older strap is no change made here.
        try adopt(renamed(strap, "wrist"), into: &registry)
        #expect(registry.publications(for: [strap, tag], readAtAdoptions: read, asReferee: false) == [.init(id: "tag", entry: tag)])
    }

    @Test func theRefereeDeletesWhatItRemovedSinceItsLastReportAndNobodyElseDoes() throws {
        var referee = SiteRegistry(), other = SiteRegistry()
        try adopt(strap, into: &referee)
        try adopt(tag, into: &referee)
        try adopt(strap, into: &other)
        try adopt(tag, into: &other)
        #expect(referee.publications(for: [strap, tag], readAtAdoptions: 2, asReferee: true).isEmpty)
        #expect(referee.publications(for: [strap], readAtAdoptions: 2, asReferee: true) == [.init(id: "tag", entry: nil)])
        #expect(other.publications(for: [strap, tag], readAtAdoptions: 2, asReferee: false).isEmpty)
        #expect(other.publications(for: [strap], readAtAdoptions: 2, asReferee: false).isEmpty)
        // A referee's first report has no earlier list to compare with.
        var new = SiteRegistry()
        try adopt(tag, into: &new)
        #expect(new.publications(for: [], readAtAdoptions: 1, asReferee: true).isEmpty)
    }

    @Test func aDeletedDeviceIsNotPublishedBackWhileItIsBeingLetGoUntilTheRegistryListsItAgain() throws {
        var registry = SiteRegistry()
        try adopt(tag, into: &registry)
        _ = try registry.received("tag", payload: [])
        // The manager still lists the tag (its removal under way): not the registry's lack, not republished.
        #expect(registry.publications(for: [tag], readAtAdoptions: 1, asReferee: false).isEmpty)
        try adopt(tag, into: &registry)
        let local = renamed(tag, "keys")
        #expect(registry.publications(for: [local], readAtAdoptions: 2, asReferee: false) == [.init(id: "tag", entry: local)])
    }

    @Test func aDeviceWhoseDriverIsNotDetectedYetIsNotPublished() {
        var registry = SiteRegistry()
        let undetected = ManagedDevice(id: "C0:FF:EE:00:00:09", address: "C0:FF:EE:00:00:09", driver: ManagedDevice.driverToDetect)
        #expect(registry.publications(for: [undetected], readAtAdoptions: 0, asReferee: true).isEmpty)
    }
}
