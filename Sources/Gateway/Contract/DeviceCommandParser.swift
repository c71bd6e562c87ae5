import Wearables

/// Turns `<id>/request/<command>` and its payload object into a `DeviceCommand`, checking what the contract
/// fixes: names, field types, ranges, and unknown fields for commands whose fields the contract lists.
///
/// It does not check what only a driver knows: whether the device supports the command (`NOT_SUPPORTED`),
/// setting names and values, which sensors a device has, or whether `allow` permits destructive commands
/// (`FORBIDDEN`, the gateway's job). `settings` and `configure` objects pass through for the driver.
public enum DeviceCommandParser {
    /// The contract's own commands, whose fields the gateway checks the same way for every driver.
    static let contractCommands = Set(CommandDescription.contract.map(\.name))

    /// Every device command: the contract's and those the registered drivers describe.
    public static func commandNames(_ registry: DriverRegistry) -> [String] {
        contractCommands.union(registry.commandsByName.filter { $0.value.route != .pairing }.keys).sorted()
    }

    public static func parse(command: String, arguments: [String: DeviceValue],
                             registry: DriverRegistry) throws(CommandError) -> DeviceCommand {
        let reader = RequestReader(arguments)
        switch command {
        case "refresh":
            try reader.rejectUnknownFields(allowed: [], request: command)
            return .refresh
        case "time_sync":
            try reader.rejectUnknownFields(allowed: [], request: command)
            return .timeSync
        case "connect", "disconnect", "clear_data", "factory_reset", "dfu/cancel":
            try reader.rejectUnknownFields(allowed: [], request: command)
            return .named(command, [:])
        case "find":
            return try find(reader)
        case "sync":
            return try sync(reader)
        case "settings":
            return .settings(arguments)
        case "configure":
            return try configure(reader)
        case "dfu":
            return try dfu(reader)
        default:
            // A driver's own command (a watch's `notify`, a strap's `recording`): one that takes nothing refuses any
            // field here; the driver reads and checks the fields of the others, unknown ones included.
            guard let described = registry.commandsByName[command], described.route != .pairing else {
                throw CommandError(
                    .unknownCommand,
                    "unknown command \"\(command)\"; device commands are \(RequestReader.list(commandNames(registry), conjunction: "and"))")
            }
            if described.arguments.isEmpty, !described.acceptsOtherFields {
                try reader.rejectUnknownFields(allowed: [], request: command)
            }
            return .named(command, arguments)
        }
    }

    /// `{"vibrations":1…10}`, `{"level":"none"|"mild"|"high"}`, or `{}` for level high.
    static func find(_ reader: RequestReader) throws(CommandError) -> DeviceCommand {
        try reader.rejectUnknownFields(allowed: ["vibrations", "level"], request: "find")
        let vibrations = try reader.integer("vibrations", in: 1...10)
        let level = try reader.choice("level", from: CommandDescription.findLevels)
        switch (vibrations, level) {
        case (let vibrations?, nil): return .find(vibrations: Int(vibrations), level: nil)
        case (nil, let level?): return .find(vibrations: nil, level: AlertLevel(name: level))
        case (nil, nil): return .find(vibrations: nil, level: .high)
        case (_?, _?): throw CommandError(.invalidValue, "find takes either vibrations or level, not both")
        }
    }

    /// `{"since_ts"?, "until_ts"?}`: Unix milliseconds, since no later than until. (A driver whose SDK writes
    /// ranges its own way translates them first: `WearableDriver.contractArguments`.)
    static func sync(_ reader: RequestReader) throws(CommandError) -> DeviceCommand {
        try reader.rejectUnknownFields(allowed: ["since_ts", "until_ts"], request: "sync")
        let meaning = "an integer Unix time in milliseconds"
        let since = try reader.integer("since_ts", atLeast: 0, meaning: meaning)
        let until = try reader.integer("until_ts", atLeast: 0, meaning: meaning)
        if let since, let until, since > until {
            throw CommandError(.invalidValue, "since_ts (\(since)) must not be later than until_ts (\(until))")
        }
        return .sync(since: since, until: until)
    }

    /// Passes through; `sensors` (each sensor's options) and `gestures` must be objects when present, since
    /// the contract gives them that shape.
    static func configure(_ reader: RequestReader) throws(CommandError) -> DeviceCommand {
        if let sensors = try reader.object("sensors") {
            let sensorReader = RequestReader(sensors, path: "sensors.")
            for name in sensors.keys.sorted() { _ = try sensorReader.object(name) }
        }
        _ = try reader.object("gestures")
        return .configure(reader.arguments)
    }

    /// `{"file":"<path under dfu.dir>","sha256":"<64 hex digits>"}`, both required: a firmware image is
    /// flashed only when the caller said which bytes they meant. The path is checked for shape here (relative,
    /// no `..`); the gateway resolves it under `dfu.dir`.
    static func dfu(_ reader: RequestReader) throws(CommandError) -> DeviceCommand {
        try reader.rejectUnknownFields(allowed: ["file", "sha256"], request: "dfu")
        let file = try reader.required(
            try reader.nonEmptyString("file"), "file", "the firmware image's path relative to dfu.dir")
        let components = file.split(separator: "/", omittingEmptySubsequences: false)
        if file.hasPrefix("/") || components.contains("..") || file.utf8.contains(0) {
            throw reader.invalid("file", "must be a path relative to dfu.dir without '..'", got: .text(file))
        }
        let sha256 = try reader.required(
            try reader.string("sha256"), "sha256", "the image's SHA-256 as 64 hex digits")
        guard sha256.utf8.count == 64, sha256.utf8.allSatisfy(RequestReader.isHexDigit) else {
            throw reader.invalid("sha256", "must be 64 hex digits", got: .text(sha256))
        }
        return .named("dfu", ["file": .text(file), "sha256": .text(sha256.lowercased())])
    }
}
