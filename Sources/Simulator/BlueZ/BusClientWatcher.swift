import DBus

/// Tells the daemon when a client leaves the bus (NameOwnerChanged with an empty new owner), because bluetoothd
/// ties discovery sessions, notify sessions and agents to the client that created them and drops them then.
struct BusClientWatcher {
    /// Subscribes and returns the task that forwards departures to `departed` until the connection ends.
    static func start(on bus: BusConnection, departed: @escaping @Sendable (String) async -> Void) async throws(BusError) -> Task<Void, Never> {
        let changes = try await bus.signals(MatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
                                                      member: "NameOwnerChanged"))
        return Task {
            for await change in changes {
                guard change.body.count == 3, let name = change.body[0].stringValue, name.hasPrefix(":"),
                      change.body[2].stringValue == "" else { continue }
                await departed(name)
            }
        }
    }
}
