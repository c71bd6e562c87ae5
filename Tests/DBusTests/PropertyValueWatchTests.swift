import CDBus
@testable import DBus
import Foundation
import SimulatedWearables
import Synchronization
import Testing
import Wear2MQTTTesting

/// The lean StartNotify path (issue 43): a PropertiesChanged whose only change is a watched byte-array property goes
/// straight from the libdbus message to the watch's handler; everything else is declined and goes the generic way.
@Suite struct PropertyValueWatchTests {
    static let characteristic = "org.bluez.GattCharacteristic1"
    static let path: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0011"

    /// A signal as libdbus would deliver it, built in this process (no bus): `sender` set by hand.
    static func message(path: ObjectPath = path, interface: String = "org.freedesktop.DBus.Properties",
                        member: String = "PropertiesChanged", sender: String = ":1.7", body: [DBusValue]) -> OpaquePointer? {
        guard let message = dbus_message_new_signal(path.rawValue, interface, member) else { return nil }
        dbus_message_set_sender(message, sender)
        guard MessageCoding.append(body, to: message) else { dbus_message_unref(message); return nil }
        return message
    }

    static func changed(_ values: [String: DBusValue], invalidated: [String] = [],
                        interface: String = characteristic) -> [DBusValue] {
        [.string(interface), .stringVariantDictionary(values), .array(elementSignature: "s", invalidated.map { .string($0) })]
    }

    /// What `deliver` hands the handler for `body` (nil: declined), with `org.bluez` owned by `owner`.
    static func delivered(_ body: [DBusValue], path: ObjectPath = path, sender: String = ":1.7", owner: String = ":1.7",
                          member: String = "PropertiesChanged") -> [UInt8]? {
        let got = Mutex<[UInt8]?>(nil)
        var watches = PropertyValueWatches()
        watches.add(.init(id: 1, sender: "org.bluez", path: Self.path, interface: characteristic, property: "Value",
                          handler: { bytes in got.withLock { $0 = bytes } }))
        guard let message = message(path: path, member: member, sender: sender, body: body) else { return nil }
        defer { dbus_message_unref(message) }
        let taken = watches.deliver(message, owner: { $0 == "org.bluez" ? owner : nil })
        let bytes = got.withLock { $0 }
        #expect(taken == (bytes != nil), "answered \(taken) but the handler \(bytes == nil ? "was not" : "was") called")
        // The signal socket's path reads the same message's bytes the same way.
        got.withLock { $0 = nil }
        let takenFromBytes = WireMessageTests.marshal(message).withUnsafeBytes { raw in
            guard let wire = WireMessage(raw) else {
                Issue.record("libdbus's bytes not read")
                return false
            }
            return watches.deliver(wire, owner: { $0 == "org.bluez" ? owner : nil })
        }
        let bytesFromBytes = got.withLock { $0 }
        #expect(takenFromBytes == taken && bytesFromBytes == bytes, "from the bytes: \(body)")
        return bytes
    }

    @Test("values a handler keeps stay as they came: the buffer refilled for the next delivery is a copy by then")
    func keptValuesStayIntact() {
        let kept = Mutex<[[UInt8]]>([])
        var watches = PropertyValueWatches()
        watches.add(.init(id: 1, sender: "org.bluez", path: Self.path, interface: Self.characteristic, property: "Value",
                          handler: { bytes in kept.withLock { $0.append(bytes) } }))
        let values: [[UInt8]] = [[0x06, 0x48], [0x16, 0x49, 0x00, 0x04], [], [0x01]]
        for value in values {
            guard let message = Self.message(body: Self.changed(["Value": .bytes(value)])) else {
                Issue.record("no message")
                return
            }
            defer { dbus_message_unref(message) }
            let taken = watches.deliver(message, owner: { $0 == "org.bluez" ? ":1.7" : nil })
            #expect(taken)
        }
        #expect(kept.withLock { $0 } == values)
    }

    @Test func aLoneValueChangeGoesStraightToItsHandler() {
        #expect(Self.delivered(Self.changed(["Value": .bytes([0x06, 0x48, 0x01])])) == [0x06, 0x48, 0x01])
        #expect(Self.delivered(Self.changed(["Value": .bytes([])])) == [])
        // Without the invalidated list at all (a sender that leaves the last argument off).
        #expect(Self.delivered([.string(Self.characteristic), .stringVariantDictionary(["Value": .bytes([7])])]) == [7])
    }

    @Test func anythingElseIsDeclinedForTheGenericPath() {
        #expect(Self.delivered(Self.changed(["Value": .bytes([1]), "Notifying": .boolean(true)])) == nil, "two changes")
        #expect(Self.delivered(Self.changed(["Notifying": .boolean(true)])) == nil, "another property")
        #expect(Self.delivered(Self.changed(["Value": .bytes([1])], invalidated: ["Flags"])) == nil, "an invalidated one")
        #expect(Self.delivered(Self.changed(["Value": .string("x")])) == nil, "not bytes")
        #expect(Self.delivered(Self.changed(["Value": .array(elementSignature: "q", [.uint16(1)])])) == nil, "not bytes")
        #expect(Self.delivered(Self.changed(["Value": .bytes([1])], interface: "org.bluez.GattDescriptor1")) == nil)
        #expect(Self.delivered(Self.changed(["Value": .bytes([1])]), path: "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0015") == nil)
        #expect(Self.delivered(Self.changed(["Value": .bytes([1])]), sender: ":1.99") == nil, "not the owner of org.bluez")
        #expect(Self.delivered(Self.changed(["Value": .bytes([1])]), owner: "") == nil, "org.bluez has no owner")
        #expect(Self.delivered(Self.changed(["Value": .bytes([1])]), member: "InterfacesAdded") == nil)
        #expect(Self.delivered([]) == nil)
        #expect(Self.delivered([.string(Self.characteristic)]) == nil)
        #expect(Self.delivered([.string(Self.characteristic), .uint32(1)]) == nil)
        #expect(Self.delivered([.uint32(1), .stringVariantDictionary(["Value": .bytes([1])])]) == nil)
    }

    @Test func aRemovedWatchTakesNothing() {
        var watches = PropertyValueWatches()
        for id: UInt64 in 1...3 {
            watches.add(.init(id: id, sender: "org.bluez", path: Self.path, interface: Self.characteristic, property: "Value",
                              handler: { _ in }))
        }
        for id: UInt64 in 1...3 { watches.remove(id: id) }
        #expect(watches.isEmpty)
        guard let message = Self.message(body: Self.changed(["Value": .bytes([1])])) else { Issue.record("no message"); return }
        defer { dbus_message_unref(message) }
        let taken = watches.deliver(message, owner: { _ in ":1.7" })
        #expect(!taken)
    }

    /// Random bodies (seeded): never a crash, and taken only when the body is exactly a lone byte-array `Value`.
    @Test func randomBodiesAreTakenOnlyWhenTheyAreALoneValueChange() {
        var generator = SimulationRandom(seed: 43)
        var taken = 0
        for _ in 0..<3000 {
            let body = Self.randomBody(using: &generator)
            let expected = Self.isLoneValueChange(body)
            let bytes = Self.delivered(body)
            #expect((bytes != nil) == expected, "\(body)")
            if bytes != nil { taken += 1 }
        }
        #expect(taken > 0, "the generator never made a lone Value change")
    }

    /// Half shaped like a PropertiesChanged (each part perhaps off), half anything.
    static func randomBody(using generator: inout SimulationRandom) -> [DBusValue] {
        if Bool.random(using: &generator) {
            return (0..<Int.random(in: 0...4, using: &generator)).map { _ in randomValue(0, using: &generator) }
        }
        let first: DBusValue = Bool.random(using: &generator) ? .string(characteristic) : randomValue(2, using: &generator)
        let inner: DBusValue? = Int.random(in: 0...3, using: &generator) > 0 ? randomValue(3, using: &generator) : nil
        let second = randomValue(2, using: &generator).dictionaryOrSelf(inner)
        let third = randomValue(2, using: &generator)
        return Array([first, second, third].prefix(Int.random(in: 1...3, using: &generator)))
    }

    static func randomValue(_ depth: Int, using generator: inout SimulationRandom) -> DBusValue {
        switch Int.random(in: 0..<(depth > 2 ? 5 : 9), using: &generator) {
        case 0: return .string(["Value", "Notifying", characteristic, ""].randomElement(using: &generator)!)
        case 1: return .bytes((0..<Int.random(in: 0..<5, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        case 2: return .uint32(.random(in: 0...9, using: &generator))
        case 3: return .boolean(.random(using: &generator))
        case 4: return .objectPath(path)
        case 5: return .variant(randomValue(depth + 1, using: &generator))
        case 6: return .array(elementSignature: "s", (0..<Int.random(in: 0..<3, using: &generator)).map { _ in .string("Flags") })
        case 7:
            let keys = ["Value", "Notifying"].shuffled(using: &generator).prefix(Int.random(in: 0...2, using: &generator))
            var entries: [String: DBusValue] = [:]
            for key in keys { entries[key] = randomValue(depth + 1, using: &generator) }
            return .stringVariantDictionary(entries)
        default: return .structure([randomValue(depth + 1, using: &generator)])
        }
    }

    /// The rule, spelled out on the value tree the generic path reads.
    static func isLoneValueChange(_ body: [DBusValue]) -> Bool {
        guard body.count == 2 || body.count == 3, body[0] == .string(characteristic),
              case .dictionary("s", "v", let entries) = body[1], entries.count == 1,
              entries[0].key == .string("Value"), case .variant(.bytes) = entries[0].value else { return false }
        guard body.count == 3 else { return true }
        if case .array("s", let invalidated) = body[2] { return invalidated.isEmpty }
        return false
    }

    /// Over a real bus: the watch's handler gets lone values from the owner of the watched name and nothing else;
    /// what it declines reaches a `signals` stream; after the watch ends, its values go the generic way too.
    @Test func overABusTheWatchTakesLoneValuesFromTheOwnerOnly() async throws {
        let daemon = try await DBusDaemon()
        let service = try BusConnection(.address(daemon.address))
        #expect(try await service.requestName("org.bluez") == .primaryOwner)
        let impostor = try BusConnection(.address(daemon.address))
        let client = try BusConnection(.address(daemon.address))
        let values = Mutex<[[UInt8]]>([])
        let changes = ChangeNotifier()
        let stop = try await client.watchByteArrayProperty("Value", of: Self.characteristic, at: Self.path, sender: "org.bluez") { bytes in
            values.withLock { $0.append(bytes) }
            changes.changed()
        }
        let generic = try await client.signals(MatchRule(sender: "org.bluez"))
        var genericSignals = generic.makeAsyncIterator()
        let impostorPings = try await client.signals(MatchRule(sender: impostor.uniqueName, member: "Ping"))
        var impostorSentinel = impostorPings.makeAsyncIterator()

        func emit(_ from: BusConnection, _ body: [DBusValue]) throws {
            try from.emitSignal(path: Self.path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", arguments: body)
        }
        // An impostor's value, then its sentinel: once the sentinel is here, so is the value (one sender's order).
        try emit(impostor, Self.changed(["Value": .bytes([0xEE])]))
        try impostor.emitSignal(path: "/", interface: "org.wear2mqtt.Test1", member: "Ping")
        #expect(await impostorSentinel.next() != nil)
        try emit(service, Self.changed(["Value": .bytes([1])]))
        try emit(service, Self.changed(["Value": .bytes([2]), "Notifying": .boolean(true)]))
        try emit(service, Self.changed(["Value": .bytes([3])]))
        #expect(await changes.until(timeout: .seconds(10)) { values.withLock { $0.count } >= 2 })
        #expect(values.withLock { $0 } == [[1], [3]])
        let declined = await genericSignals.next()
        #expect(declined?.body == Self.changed(["Value": .bytes([2]), "Notifying": .boolean(true)]))

        stop()
        _ = try await client.nameOwner("org.bluez")  // a round trip: the loop handled the stop before it read the reply
        try emit(service, Self.changed(["Value": .bytes([4])]))
        let afterStop = await genericSignals.next()
        #expect(afterStop?.body == Self.changed(["Value": .bytes([4])]))
        #expect(values.withLock { $0 } == [[1], [3]])

        client.close()
        impostor.close()
        service.close()
        await daemon.stop()
    }
}

private extension DBusValue {
    /// A one-entry `Value` dictionary holding `value` (when given), else `self`.
    func dictionaryOrSelf(_ value: DBusValue?) -> DBusValue {
        value.map { .stringVariantDictionary(["Value": $0]) } ?? self
    }
}
