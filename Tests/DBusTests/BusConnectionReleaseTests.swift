import DBus
import Testing
import Wear2MQTTTesting

/// A connection that has closed is freed with everything it exported (LeakSanitizer found every `BusConnection`
/// kept by a cycle: loop → method-call handler → object registry → sender → loop).
@Suite
struct BusConnectionReleaseTests {
    final class Weak<Object: AnyObject>: @unchecked Sendable {
        weak var object: Object?
        init(_ object: Object) { self.object = object }
    }

    /// Found under load (a simulator test's teardown printed "call(…) leaked its continuation"): a call made after
    /// the connection finished waited in an inbox nobody drained, forever.
    @Test("a call or a subscription made after the connection closed ends at once: disconnected")
    func callAfterCloseEnds() async throws {
        let daemon = try await DBusDaemon()
        defer { daemon.directory.remove() }
        let connection = try BusConnection(.address(daemon.address))
        connection.close()
        for await _ in connection.disconnection {}
        await #expect(throws: BusError.disconnected) {
            try await connection.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                      interface: "org.freedesktop.DBus", member: "GetId")
        }
        await daemon.stop()
    }

    @Test("closed, with an exported object, a connection and its registry are freed")
    func closedConnectionIsFreed() async throws {
        let daemon = try await DBusDaemon()
        defer { daemon.directory.remove() }
        var connection: BusConnection? = try BusConnection(.address(daemon.address))
        let registry = Weak(try #require(connection).objects)
        try #require(connection).objects.addObjectManager(at: "/")
        try #require(connection).objects.export("/thing", interfaces: [(InterfaceDefinition("org.wear2mqtt.Thing1"), [:])])
        try #require(connection).close()
        for await _ in try #require(connection).disconnection {}
        connection = nil
        // eventually: the connection's own loop thread lets go of it as the thread ends, which nothing signals.
        #expect(await eventually(timeout: .seconds(20)) { registry.object == nil }, "the registry outlived its closed connection")
        await daemon.stop()
    }
}
