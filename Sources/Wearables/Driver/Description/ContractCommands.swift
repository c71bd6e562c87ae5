/// The contract's own commands (docs/mqtt-api.md), described once: a driver lists those its devices accept, and
/// the gateway parses their fields (`DeviceCommandParser`) the same way for every driver. A driver's own commands
/// (a watch's `notify`) are described in its folder.
extension CommandDescription {
    public static let refresh = CommandDescription("refresh", "Read battery and device information again and republish the state")
    /// `find` by an alert level (the Immediate Alert service).
    public static let findByLevel = CommandDescription("find", "Make the device noticeable", arguments: [
        ArgumentDescription("level", .choice(findLevels), "how loud: none stops an alert (default high)"),
    ])
    /// `find` by a number of vibrations (a band's motor).
    public static let findByVibrations = CommandDescription("find", "Make the device vibrate", arguments: [
        ArgumentDescription("vibrations", .integer(1...10), "how many times (default: one alert)"),
    ])
    public static let timeSync = CommandDescription("time_sync", "Set the device's clock from the gateway's")
    public static let sync = CommandDescription("sync", "Download the history the device recorded", arguments: [
        ArgumentDescription("since_ts", .timestamp, "from this time"),
        ArgumentDescription("until_ts", .timestamp, "up to this time"),
    ], duration: .long, reportsProgress: true)
    /// `settings`: any subset of the device's settings (its `settings` describe them).
    public static let settings = CommandDescription("settings", "Change some of the device's settings", acceptsOtherFields: true)
    /// `configure`: sensors and gestures; a driver whose configure also starts a download says when it runs long.
    public static func configure(_ arguments: [ArgumentDescription] = defaultConfigureArguments,
                                 duration: Duration = .quick) -> CommandDescription {
        CommandDescription("configure", "Choose which sensors stream and how fast", arguments: arguments,
                           acceptsOtherFields: true, duration: duration)
    }
    public static let defaultConfigureArguments = [
        ArgumentDescription("sensors", .object, "per sensor: {\"enabled\":…, and its rate}"),
    ]
    public static let connect = CommandDescription("connect", "Connect now instead of waiting for the next attempt", route: .session)
    public static let disconnect = CommandDescription("disconnect", "Disconnect and stop reconnecting until connect", route: .session)
    public static let firmwareUpdate = CommandDescription("dfu", "Install a firmware package from dfu.dir", arguments: [
        ArgumentDescription("file", .text, required: true, "the package's path relative to dfu.dir"),
        ArgumentDescription("sha256", .text, required: true, "its SHA-256, 64 hex digits"),
    ], allow: .dfu, duration: .long, reportsProgress: true, route: .gateway)
    public static let cancelFirmwareUpdate = CommandDescription("dfu/cancel", "Stop a firmware update", route: .gateway)
    public static let clearData = CommandDescription("clear_data", "Erase the history stored on the device", allow: .clearData)
    public static let factoryReset = CommandDescription("factory_reset", "Return the device to its factory state", allow: .factoryReset)

    /// Levels of the Immediate Alert service, by their contract names.
    public static let findLevels = AlertLevel.allCases.map(\.name)

    /// The commands every device of a family that updates by DFU has.
    public static let firmwareUpdateCommands = [firmwareUpdate, cancelFirmwareUpdate]
    /// The link commands every device has.
    public static let linkCommands = [connect, disconnect]

    /// Every command the contract itself defines, whichever drivers accept them.
    public static let contract: [CommandDescription] = [
        refresh, findByLevel, timeSync, sync, settings, configure(), connect, disconnect, firmwareUpdate,
        cancelFirmwareUpdate, clearData, factoryReset,
    ]
}
