extension InfiniTimeDriver {
    public static let driverDescription = DriverDescription(
        name: "infinitime", vendor: "PINE64 (InfiniTime)",
        summary: "PineTime watches running InfiniTime: heart rate, steps, motion; notifications, music, weather and navigation pushed to the watch",
        advertisement: AdvertisementDescription(serviceUUIDs: customServices, namePrefixes: [advertisedName]),
        sensors: [
            SensorDescription(.heartRate),
            SensorDescription(.steps),
            SensorDescription(.accelerometer, unit: "m/s²"),
        ],
        events: [
            EventDescription("music", "A button of the watch's music app", actions: InfiniTimeMusicEvent.allCases.map(\.contractName)),
            EventDescription("call", "An answer on the watch's incoming-call screen", actions: InfiniTimeCallResponse.allCases.map(\.contractName)),
        ],
        commands: [
            .refresh, .findByLevel, .timeSync,
            CommandDescription("notify", "Show a notification on the watch", arguments: [
                ArgumentDescription("title", .text, "its first line"),
                ArgumentDescription("body", .text, "the text"),
                ArgumentDescription("category", .choice(InfiniTimeAlertCategory.contractNames), "the alert's kind (call rings)"),
            ]),
            CommandDescription("music", "Tell the watch's music app what plays", arguments: [
                ArgumentDescription("playing", .flag, "playing or paused"),
                ArgumentDescription("artist", .text, "the artist"),
                ArgumentDescription("track", .text, "the track's title"),
                ArgumentDescription("album", .text, "the album"),
                ArgumentDescription("position_s", .integer(0...Int64(UInt32.max)), "where playback is, in seconds"),
                ArgumentDescription("length_s", .integer(0...Int64(UInt32.max)), "the track's length, in seconds"),
                ArgumentDescription("track_number", .integer(0...Int64(UInt32.max)), "its number on the album"),
                ArgumentDescription("track_total", .integer(0...Int64(UInt32.max)), "the album's track count"),
                ArgumentDescription("speed", .number(0...100), "the playback rate (1.0 is normal)"),
                ArgumentDescription("repeat", .flag, "repeat on"),
                ArgumentDescription("shuffle", .flag, "shuffle on"),
            ]),
            CommandDescription("weather", "Send the current weather and a forecast", arguments: [
                ArgumentDescription("current", .object, "temperature, min, max (°C), location, icon, sunrise, sunset"),
                ArgumentDescription("forecast", .list, "days of {min, max, icon}"),
            ]),
            CommandDescription("navigation", "Show a navigation step", arguments: [
                ArgumentDescription("icon", .choice(InfiniTimeNavigationIcon.allCases.map(\.rawValue)), "the manoeuvre's icon"),
                ArgumentDescription("narrative", .text, "what to do"),
                ArgumentDescription("distance", .text, "how far (\"50 m\")"),
                ArgumentDescription("progress", .integer(0...100), "percent of the way"),
            ]),
        ] + CommandDescription.linkCommands + CommandDescription.firmwareUpdateCommands,
        firmwareUpdate: FirmwareUpdateDescription(.nordicDFU, note:
            "validate the new firmware in the watch's settings (Settings > Firmware > Validate), or it goes back to the old one at its next restart"),
        pairing: .passkey)
}
