/// Which layer runs a device command: the one table that says so.
///
/// - `gateway`: the gateway itself, for any driver (a firmware update speaks Nordic DFU whoever made the device,
///   and outlives the connection it starts on);
/// - `session`: the device's session, which owns the link (`connect`, `disconnect`);
/// - `driver`: the device's driver, over its link, if the driver lists the command.
public enum CommandRoute: Sendable, Equatable {
    case gateway, session, driver

    static let table: [String: CommandRoute] = [
        "dfu": .gateway, "dfu/cancel": .gateway,
        "connect": .session, "disconnect": .session,
    ]

    public static func route(of command: String) -> CommandRoute { table[command] ?? .driver }

    /// Commands a device of any driver accepts, because a layer above the driver runs them.
    public static var commandsForEveryDriver: Set<String> { Set(table.keys) }
}
