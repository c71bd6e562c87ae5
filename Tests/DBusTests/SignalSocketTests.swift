import CDBus
@testable import DBus
import Foundation
import SimulatedWearables
import Synchronization
import Testing
import Wear2MQTTTesting

/// The second socket that receives StartNotify values without libdbus (issue 43): its address, its handshake, its
/// framing of a stream split anywhere, and — over a private dbus-daemon — watches and streams fed from it.
@Suite struct SignalSocketTests {
    @Test func addressesAreReadAsTheSpecificationWritesThem() {
        #expect(BusSocketAddress.parse("unix:path=/run/dbus/system_bus_socket") == .path("/run/dbus/system_bus_socket"))
        #expect(BusSocketAddress.parse("unix:abstract=/tmp/dbus-Xy,guid=0123456789abcdef") == .abstract("/tmp/dbus-Xy"))
        #expect(BusSocketAddress.parse("tcp:host=localhost,port=7;unix:path=/tmp/b") == .path("/tmp/b"), "the first usable one")
        #expect(BusSocketAddress.parse("unix:path=/tmp/a%20b%2c") == .path("/tmp/a b,"))
        #expect(BusSocketAddress.parse("unix:path=/tmp/%zz") == nil, "a broken escape")
        #expect(BusSocketAddress.parse("unix:runtime=yes", environment: { $0 == "XDG_RUNTIME_DIR" ? "/run/user/1000" : nil })
                == .path("/run/user/1000/bus"))
        #expect(BusSocketAddress.parse("tcp:host=localhost,port=7") == nil)
        #expect(BusSocketAddress.parse("unix:tmpdir=/tmp") == nil, "a listening address only")
        #expect(BusSocketAddress.resolve(.system, environment: { _ in nil }) == .path("/var/run/dbus/system_bus_socket"))
        #expect(BusSocketAddress.resolve(.system, environment: { $0 == "DBUS_SYSTEM_BUS_ADDRESS" ? "unix:path=/x" : nil }) == .path("/x"))
        #expect(BusSocketAddress.resolve(.session, environment: { _ in nil }) == nil)
    }

    /// The specification's own example: user id 1000 sent as the hex of its digits, "31303030".
    @Test func theHandshakeIsTheSpecificationsExternal() throws {
        #expect(BusAuthentication.request(userID: 1000) == [0] + Array("AUTH EXTERNAL 31303030\r\n".utf8))
        #expect(BusAuthentication.request(userID: 0) == [0] + Array("AUTH EXTERNAL 30\r\n".utf8))
        try BusAuthentication.check(answer: Array("OK 1234deadbeef".utf8))
        #expect(throws: BusError.self) { try BusAuthentication.check(answer: Array("REJECTED EXTERNAL".utf8)) }
        #expect(throws: BusError.self) { try BusAuthentication.check(answer: Array("ERROR".utf8)) }
    }

    /// Messages written in pieces of random sizes — a byte at a time, across message boundaries, one far larger than
    /// the buffer — come out whole and in order.
    @Test func aStreamSplitAnywhereIsHandedOverWhole() throws {
        var generator = SimulationRandom(seed: 5)
        let messages = (0..<40).map { index in
            WireMessageTests.propertiesChanged(bigEndian: index % 2 == 1, value: Array(repeating: UInt8(index),
                                                                                      count: index == 17 ? 300_000 : index * 3))
        }
        let stream = messages.flatMap { $0 }
        let (socket, writer) = try Self.socketPair()
        defer { close(writer) }
        var received: [[UInt8]] = []
        var written = 0
        while written < stream.count {
            let piece = min(stream.count - written, [1, 7, 500, 20_000, 60_000].randomElement(using: &generator)!)
            let sent = stream.withUnsafeBytes { send(writer, $0.baseAddress! + written, piece, 0) }
            #expect(sent > 0)
            written += max(sent, 0)
            while try socket.receive(rounds: 4, { bytes in received.append(Array(bytes)); return true }) {}
        }
        #expect(received == messages)
    }

    @Test func aStreamThatIsNotDBusOrEndsIsAnError() throws {
        let (socket, writer) = try Self.socketPair()
        _ = Array("not a D-Bus message at all".utf8).withUnsafeBytes { send(writer, $0.baseAddress!, $0.count, 0) }
        #expect(throws: BusError.self) { _ = try socket.receive(rounds: 4) { _ in true } }
        let (ending, peer) = try Self.socketPair()
        let half = Array(WireMessageTests.propertiesChanged(bigEndian: false, value: [1]).prefix(30))
        _ = half.withUnsafeBytes { send(peer, $0.baseAddress!, $0.count, 0) }
        close(peer)
        #expect(throws: BusError.disconnected) { _ = try ending.receive(rounds: 4) { _ in true } }
        close(writer)
    }

    /// Over a real bus: values come once each, by the signal socket, from the owner only; what the watch declines and
    /// what comes after it ends reach the stream; nothing comes twice (the main socket is not asked for them).
    @Test func overTheSignalSocketWatchesTakeLoneValuesAndStreamsTheRest() async throws {
        let characteristic = PropertyValueWatchTests.characteristic, path = PropertyValueWatchTests.path
        let daemon = try await DBusDaemon()
        let service = try BusConnection(.address(daemon.address))
        #expect(try await service.requestName("org.bluez") == .primaryOwner)
        let impostor = try BusConnection(.address(daemon.address))
        let client = try BusConnection(.address(daemon.address))
        let characteristicChanges = MatchRule(sender: "org.bluez", interface: "org.freedesktop.DBus.Properties",
                                              member: "PropertiesChanged", arg0: characteristic)
        try client.receiveOnSignalSocket([characteristicChanges])
        try client.receiveOnSignalSocket([characteristicChanges])  // again: nothing changes
        #expect(throws: BusError.self) { try client.receiveOnSignalSocket([MatchRule(sender: "org.bluez")]) }
        let values = Mutex<[[UInt8]]>([])
        let changes = ChangeNotifier()
        let stop = try await client.watchByteArrayProperty("Value", of: characteristic, at: path, sender: "org.bluez") { bytes in
            values.withLock { $0.append(bytes) }
            changes.changed()
        }
        // Everything from org.bluez, but at the bus only what the signal socket does not bring: Device1's changes.
        let generic = try await client.signals(MatchRule(sender: "org.bluez"), addingAtBus: [
            MatchRule(sender: "org.bluez", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                      arg0: "org.bluez.Device1"),
        ])
        var genericSignals = generic.makeAsyncIterator()
        let impostorPings = try await client.signals(MatchRule(sender: impostor.uniqueName, member: "Ping"))
        var impostorSentinel = impostorPings.makeAsyncIterator()

        func emit(_ from: BusConnection, _ body: [DBusValue]) throws {
            try from.emitSignal(path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", arguments: body)
        }
        try emit(impostor, PropertyValueWatchTests.changed(["Value": .bytes([0xEE])]))
        try impostor.emitSignal(path: "/", interface: "org.wear2mqtt.Test1", member: "Ping")
        #expect(await impostorSentinel.next() != nil)
        try emit(service, PropertyValueWatchTests.changed(["Value": .bytes([1])]))
        try emit(service, PropertyValueWatchTests.changed(["Value": .bytes([2]), "Notifying": .boolean(true)]))
        try emit(service, PropertyValueWatchTests.changed(["Value": .bytes(Array(repeating: 3, count: 70_000))]))
        try emit(service, PropertyValueWatchTests.changed(["Connected": .boolean(true)], interface: "org.bluez.Device1"))
        #expect(await changes.until(timeout: .seconds(10)) { values.withLock { $0.count } >= 2 })
        // By the signal socket, decoded by libdbus; then by the main socket, in the order each socket got them.
        let declined = await genericSignals.next()
        #expect(declined?.body == PropertyValueWatchTests.changed(["Value": .bytes([2]), "Notifying": .boolean(true)]))
        let device = await genericSignals.next()
        #expect(device?.body == PropertyValueWatchTests.changed(["Connected": .boolean(true)], interface: "org.bluez.Device1"))

        stop()
        _ = try await client.nameOwner("org.bluez")  // a round trip: the loop handled the stop before it read the reply
        try emit(service, PropertyValueWatchTests.changed(["Value": .bytes([4])]))
        let afterStop = await genericSignals.next()
        #expect(afterStop?.body == PropertyValueWatchTests.changed(["Value": .bytes([4])]))
        #expect(values.withLock { $0 } == [[1], Array(repeating: 3, count: 70_000)])

        client.close()
        impostor.close()
        service.close()
        await daemon.stop()
    }

    /// When the watched name changes hands, values from the new owner are taken and the old owner's answer is not
    /// reused (the loop remembers the last owner it looked up).
    @Test func aWatchFollowsTheNameToItsNewOwner() async throws {
        let characteristic = PropertyValueWatchTests.characteristic, path = PropertyValueWatchTests.path
        let daemon = try await DBusDaemon()
        let first = try BusConnection(.address(daemon.address))
        #expect(try await first.requestName("org.bluez") == .primaryOwner)
        let second = try BusConnection(.address(daemon.address))
        let client = try BusConnection(.address(daemon.address))
        try client.receiveOnSignalSocket([MatchRule(sender: "org.bluez", interface: "org.freedesktop.DBus.Properties",
                                                    member: "PropertiesChanged", arg0: characteristic)])
        let values = Mutex<[[UInt8]]>([])
        let changes = ChangeNotifier()
        let stop = try await client.watchByteArrayProperty("Value", of: characteristic, at: path, sender: "org.bluez") { bytes in
            values.withLock { $0.append(bytes) }
            changes.changed()
        }
        func emit(_ from: BusConnection, _ value: [UInt8]) throws {
            try from.emitSignal(path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                                arguments: PropertyValueWatchTests.changed(["Value": .bytes(value)]))
        }
        let ownerChanges = try await client.signals(MatchRule(interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
                                                              arg0: "org.bluez"))
        var ownerChange = ownerChanges.makeAsyncIterator()
        try emit(first, [1])
        #expect(await changes.until(timeout: .seconds(10)) { values.withLock { $0.count } >= 1 })
        try emit(second, [0xEE])  // not the owner
        #expect(try await second.requestName("org.bluez", doNotQueue: false) == .inQueue)
        first.close()
        // The bus hands the name to the one queued. The loop takes the change before its streams see it.
        var handedOver = false
        while let change = await ownerChange.next() {
            if change.body.count > 2, change.body[2].stringValue == second.uniqueName {
                handedOver = true
                break
            }
        }
        #expect(handedOver)
        try emit(second, [2])
        #expect(await changes.until(timeout: .seconds(10)) { values.withLock { $0.count } >= 2 })
        #expect(values.withLock { $0 } == [[1], [2]])
        stop()
        client.close()
        second.close()
        await daemon.stop()
    }

    /// The loop's side, with one end of a socket pair standing in for the bus: a lone value from the owner reaches its
    /// watch; then a stream that is not D-Bus, or the other end hanging up, ends the whole connection (its owner
    /// reconnects, as when the bus goes) instead of leaving the values to stop unnoticed.
    @Test(arguments: ["not D-Bus", "hung up"])
    func aBrokenSignalSocketEndsTheConnection(_ way: String) async throws {
        let daemon = try await DBusDaemon()
        let service = try BusConnection(.address(daemon.address))
        #expect(try await service.requestName("org.bluez") == .primaryOwner)
        let client = try BusConnection(.address(daemon.address))
        let values = Mutex<[[UInt8]]>([])
        let changes = ChangeNotifier()
        let stop = try await client.watchByteArrayProperty("Value", of: PropertyValueWatchTests.characteristic,
                                                           at: PropertyValueWatchTests.path, sender: "org.bluez") { bytes in
            values.withLock { $0.append(bytes) }
            changes.changed()
        }
        let (socket, peer) = try Self.socketPair()
        client.loop.send(.attachSignalSocket(socket, rules: [MatchRule(sender: "org.bluez")]))
        let value = WireMessageTests.propertiesChanged(bigEndian: true, value: [5, 6], sender: service.uniqueName)
        #expect(value.withUnsafeBytes { send(peer, $0.baseAddress!, $0.count, 0) } == value.count)
        #expect(await changes.until(timeout: .seconds(10)) { values.withLock { $0.count } == 1 })
        #expect(values.withLock { $0 } == [[5, 6]])
        if way == "hung up" {
            close(peer)
        } else {
            _ = Array("not a D-Bus message at all".utf8).withUnsafeBytes { send(peer, $0.baseAddress!, $0.count, 0) }
        }
        // Woken when the connection ends, at most 10 s: a socket that broke unnoticed fails here instead of hanging.
        let ended = Mutex(false)
        Task {
            for await _ in client.disconnection {}
            ended.withLock { $0 = true }
            changes.changed()
        }
        #expect(await changes.until(timeout: .seconds(10)) { ended.withLock { $0 } }, "the connection did not end")
        stop()
        if way != "hung up" { close(peer) }
        service.close()
        await daemon.stop()
    }

    @Test func aBusThatIsNotThereIsAnErrorNotAHang() async throws {
        let directory = try TemporaryDirectory(prefix: "nobus")
        #expect(throws: BusError.self) { _ = try SignalSocket.open(.path(directory.file("bus")), rules: []) }
    }

    static func socketPair() throws -> (SignalSocket, Int32) {
        var descriptors: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &descriptors) == 0 else { throw BusError.connectionFailed("socketpair") }
        return (SignalSocket(descriptor: descriptors[0], address: .path("pair")), descriptors[1])
    }
}
