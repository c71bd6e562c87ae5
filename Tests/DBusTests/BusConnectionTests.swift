import DBus
import Foundation
import Synchronization
import Testing
import Wear2MQTTTesting

/// Two connections on a private dbus-daemon: one exports objects, the other calls them.
@Suite(.timeLimit(.minutes(2)))
struct BusConnectionTests {
    static let testInterface = "org.wear2mqtt.Test1"

    /// Calls to the service's Hold method: each stays unanswered until the test lets it go, and the test learns of
    /// each arrival.
    final class HeldCalls: Sendable {
        private let state = Mutex<(arrived: Int, waiting: [CheckedContinuation<Void, Never>])>((0, []))
        private let changes = ChangeNotifier()

        func hold() async {
            await withCheckedContinuation { continuation in
                state.withLock { state in
                    state.arrived += 1
                    state.waiting.append(continuation)
                }
                changes.changed()
            }
        }

        /// True once `count` calls have arrived, woken by each; false after `timeout`.
        func arrived(_ count: Int, timeout: Duration = .seconds(10)) async -> Bool {
            await changes.until(timeout: timeout) { state.withLock { $0.arrived } >= count }
        }

        /// Answers every call held now.
        func release() {
            for waiting in state.withLock({ state in defer { state.waiting = [] }; return state.waiting }) { waiting.resume() }
        }
    }

    let held = HeldCalls()

    /// A service connection exporting `/test` with Echo(v) → v, Fail, Hold (answered when `held` lets it go), and a
    /// property.
    func makeService(_ daemon: DBusDaemon, name: String = "org.wear2mqtt.TestService") async throws -> BusConnection {
        let service = try BusConnection(.address(daemon.address))
        let echo = MethodDefinition("Echo", input: "v", output: "v") { call in call.arguments }
        let fail = MethodDefinition("Fail", input: "") { _ throws(BusError) in
            throw .remote(name: "org.bluez.Error.InProgress", message: "Operation already in progress")
        }
        let held = held
        let hold = MethodDefinition("Hold", input: "") { _ in
            await held.hold()
            return []
        }
        let pipe = MethodDefinition("Pipe", input: "", output: "h") { _ throws(BusError) in
            var fds: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds) == 0 else { throw .failed("socketpair") }
            let message = Array("through the fd".utf8)
            _ = write(fds[0], message, message.count)
            close(fds[0])
            return [.unixFD(UnixFileDescriptor(owning: fds[1]))]
        }
        let level = PropertyDefinition("Level", signature: "y", access: .readwrite) { value throws(BusError) in
            guard let level = value.integerValue, level <= 2 else { throw .invalidArgs("Level must be 0, 1 or 2") }
        }
        let interface = InterfaceDefinition(Self.testInterface, methods: [echo, fail, hold, pipe],
                                            properties: [level, PropertyDefinition("Name", signature: "s")],
                                            signals: [SignalDefinition("Ping", signature: "s")])
        service.objects.addObjectManager(at: "/")
        service.objects.export("/test", interfaces: [(interface, ["Level": .byte(0), "Name": "tester"])])
        #expect(try await service.requestName(name) == .primaryOwner)
        return service
    }

    func call(_ client: BusConnection, _ member: String, _ arguments: [DBusValue] = [],
              destination: String = "org.wear2mqtt.TestService", timeout: Duration = .seconds(5)) async throws(BusError) -> [DBusValue] {
        try await client.call(destination: destination, path: "/test", interface: Self.testInterface, member: member,
                              arguments: arguments, timeout: timeout)
    }

    @Test func everyTypeRoundTripsThroughAVariant() async throws {
        let daemon = try await DBusDaemon()
        let service = try await makeService(daemon)
        let client = try BusConnection(.address(daemon.address))
        let values: [DBusValue] = [
            .byte(200), .boolean(true), .int16(-12345), .uint16(54321), .int32(-7), .uint32(4_000_000_000),
            .int64(-9_000_000_000), .uint64(18_000_000_000_000_000_000), .double(-2.5), .string("héllo ✓"),
            .objectPath("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"), .signature("a{sv}"), .bytes([0, 1, 254, 255]), .bytes([]),
            .strings(["a", "b"]), .array(elementSignature: "i", []),
            .stringVariantDictionary(["Name": "strap", "RSSI": .int16(-60), "UUIDs": .strings(["180d"])]),
            .dictionary(keySignature: "q", valueSignature: "v", [.init(.uint16(0x004C), .variant(.bytes([1, 2])))]),
            .structure([.string("x"), .uint32(1), .bytes([9])]),
            .variant(.variant(.int32(3))),
        ]
        for value in values {
            let reply = try await call(client, "Echo", [.variant(value)])
            #expect(reply == [.variant(value)], "round trip of \(value.signature)")
        }
        client.close()
        service.close()
        await daemon.stop()
    }

    @Test func aRemoteErrorKeepsItsNameAndAnUnknownMethodIsNamedToo() async throws {
        let daemon = try await DBusDaemon()
        let service = try await makeService(daemon)
        let client = try BusConnection(.address(daemon.address))
        await #expect(throws: BusError.remote(name: "org.bluez.Error.InProgress", message: "Operation already in progress")) {
            try await call(client, "Fail")
        }
        do {
            _ = try await call(client, "Nope")
            Issue.record("an unknown method answered")
        } catch {
            #expect(error.remoteName == "org.freedesktop.DBus.Error.UnknownMethod")
        }
        do {
            _ = try await call(client, "Echo", [.string("not a variant")])
            Issue.record("a wrong signature was accepted")
        } catch {
            #expect(error.remoteName == "org.freedesktop.DBus.Error.InvalidArgs")
        }
        client.close()
        service.close()
        await daemon.stop()
    }

    @Test func aSlowReplyTimesOutWithoutBlockingOtherCalls() async throws {
        let daemon = try await DBusDaemon()
        let service = try await makeService(daemon)
        let client = try BusConnection(.address(daemon.address))
        // A call the service holds is still pending when another call has come and gone; answered, it returns.
        let finished = Mutex(false)
        let waiting = Task {
            _ = try? await call(client, "Hold", timeout: .seconds(20))
            finished.withLock { $0 = true }
        }
        #expect(await held.arrived(1), "the call reached the service")
        #expect(try await call(client, "Echo", [.variant(.uint32(1))]) == [.variant(.uint32(1))])
        #expect(!finished.withLock { $0 })
        held.release()
        await waiting.value
        #expect(finished.withLock { $0 })
        // And one whose deadline passes first fails with a timeout naming it.
        let slow = Task { () async throws(BusError) -> [DBusValue] in
            try await call(client, "Hold", timeout: .milliseconds(300))
        }
        await #expect(throws: BusError.timeout(member: "\(Self.testInterface).Hold on /test")) { try await slow.value }
        held.release()
        client.close()
        service.close()
        await daemon.stop()
    }

    @Test func propertiesGetSetAndChangedSignals() async throws {
        let daemon = try await DBusDaemon()
        let service = try await makeService(daemon)
        let client = try BusConnection(.address(daemon.address))
        let changes = try await client.signals(MatchRule(sender: "org.wear2mqtt.TestService", path: "/test",
                                                         interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        let properties = { (member: String, arguments: [DBusValue]) async throws(BusError) -> [DBusValue] in
            try await client.call(destination: "org.wear2mqtt.TestService", path: "/test",
                                  interface: "org.freedesktop.DBus.Properties", member: member, arguments: arguments)
        }
        #expect(try await properties("Get", [.string(Self.testInterface), "Name"]) == [.variant("tester")])
        #expect(try await properties("GetAll", [.string(Self.testInterface)]).first?.stringKeyedDictionary?["Level"] == .byte(0))
        _ = try await properties("Set", [.string(Self.testInterface), "Level", .variant(.byte(2))])
        do {
            _ = try await properties("Set", [.string(Self.testInterface), "Level", .variant(.byte(7))])
            Issue.record("an out-of-range value was accepted")
        } catch {
            #expect(error.remoteName == "org.freedesktop.DBus.Error.InvalidArgs")
        }
        do {
            _ = try await properties("Set", [.string(Self.testInterface), "Name", .variant("x")])
            Issue.record("a read-only property was written")
        } catch {
            #expect(error.remoteName == "org.freedesktop.DBus.Error.PropertyReadOnly")
        }
        var iterator = changes.makeAsyncIterator()
        let changed = try #require(await iterator.next())
        #expect(changed.body.first == .string(Self.testInterface))
        #expect(changed.body[1].stringKeyedDictionary == ["Level": .byte(2)])
        // The service side changes it too.
        service.objects.object(at: "/test")?.setProperty("Name", "renamed", interface: Self.testInterface)
        #expect(await iterator.next()?.body[1].stringKeyedDictionary == ["Name": "renamed"])
        client.close()
        service.close()
        await daemon.stop()
    }

    @Test func objectManagerListsObjectsAndAnnouncesAddedAndRemovedOnes() async throws {
        let daemon = try await DBusDaemon()
        let service = try await makeService(daemon)
        let client = try BusConnection(.address(daemon.address))
        let announcements = try await client.signals(MatchRule(sender: "org.wear2mqtt.TestService",
                                                               interface: "org.freedesktop.DBus.ObjectManager"))
        let managed = try await client.call(destination: "org.wear2mqtt.TestService", path: "/",
                                            interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
        let objects = try #require(managed.first?.dictionaryEntries)
        #expect(objects.map(\.key) == [.objectPath("/test")])
        #expect(objects.first?.value.stringKeyedDictionary?[Self.testInterface]?.stringKeyedDictionary?["Name"] == "tester")

        let extra = InterfaceDefinition("org.wear2mqtt.Extra1", properties: [PropertyDefinition("On", signature: "b")])
        service.objects.export("/test/child", interfaces: [(extra, ["On": true])])
        service.objects.unexport("/test/child")
        var iterator = announcements.makeAsyncIterator()
        let added = try #require(await iterator.next())
        #expect(added.member == "InterfacesAdded")
        #expect(added.body.first == .objectPath("/test/child"))
        let removed = try #require(await iterator.next())
        #expect(removed.member == "InterfacesRemoved")
        #expect(removed.body.last?.stringArrayValue == ["org.wear2mqtt.Extra1"])

        let xml = try await client.call(destination: "org.wear2mqtt.TestService", path: "/test",
                                        interface: "org.freedesktop.DBus.Introspectable", member: "Introspect")
        let text = try #require(xml.first?.stringValue)
        #expect(text.contains("<interface name=\"\(Self.testInterface)\">"))
        #expect(text.contains("<method name=\"Echo\"><arg type=\"v\" direction=\"in\"/><arg type=\"v\" direction=\"out\"/></method>"))
        client.close()
        service.close()
        await daemon.stop()
    }

    @Test func aUnixFileDescriptorArrivesAndCarriesData() async throws {
        let daemon = try await DBusDaemon()
        let service = try await makeService(daemon)
        let client = try BusConnection(.address(daemon.address))
        #expect(client.canPassFileDescriptors)
        let reply = try await call(client, "Pipe")
        let fd = try #require(reply.first?.unixFDValue)
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(fd.rawValue, &buffer, buffer.count)
        #expect(String(decoding: buffer.prefix(max(0, count)), as: UTF8.self) == "through the fd")
        client.close()
        service.close()
        await daemon.stop()
    }

    @Test func signalsFromAWellKnownNameAreToldApartFromTheSameSignalByAnotherSender() async throws {
        let daemon = try await DBusDaemon()
        let service = try await makeService(daemon)
        let impostor = try BusConnection(.address(daemon.address))
        let client = try BusConnection(.address(daemon.address))
        let pings = try await client.signals(MatchRule(sender: "org.wear2mqtt.TestService", interface: Self.testInterface, member: "Ping"))
        try impostor.emitSignal(path: "/test", interface: Self.testInterface, member: "Ping", arguments: ["impostor"])
        service.objects.object(at: "/test")?.emit(signal: "Ping", interface: Self.testInterface, arguments: ["genuine"])
        var iterator = pings.makeAsyncIterator()
        #expect(await iterator.next()?.body == ["genuine"])
        client.close()
        impostor.close()
        service.close()
        await daemon.stop()
    }

    @Test func badArgumentsAreATypedErrorNotACrash() async throws {
        let daemon = try await DBusDaemon()
        let client = try BusConnection(.address(daemon.address))
        await #expect(throws: BusError.self) {
            try await client.call(destination: "org.x", path: "not/a/path", interface: "org.x", member: "M")
        }
        await #expect(throws: BusError.self) {
            try await client.call(destination: "org.x", path: "/x", interface: "org.x", member: "M", arguments: [.string("nul\u{0}")])
        }
        await #expect(throws: BusError.self) {
            try await client.call(destination: "org.x", path: "/x", interface: "org.x", member: "M",
                                  arguments: [.array(elementSignature: "s", [.uint32(1)])])
        }
        client.close()
        await daemon.stop()
    }

    @Test func whenTheBusDiesPendingCallsFailAndStreamsEnd() async throws {
        let daemon = try await DBusDaemon()
        let service = try await makeService(daemon)
        let client = try BusConnection(.address(daemon.address))
        let pings = try await client.signals(MatchRule(interface: Self.testInterface))
        let pending = Task { () async throws(BusError) -> [DBusValue] in
            try await call(client, "Hold", timeout: .seconds(20))
        }
        #expect(await held.arrived(1), "the call is pending at the service")
        await daemon.kill()
        await #expect(throws: BusError.disconnected) { try await pending.value }
        held.release()
        var iterator = pings.makeAsyncIterator()
        #expect(await iterator.next() == nil)
        for await _ in client.disconnection {}
        service.close()
        daemon.directory.remove()
    }
}
