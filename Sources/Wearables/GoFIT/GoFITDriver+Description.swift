extension GoFITDriver {
    public static let driverDescription = DriverDescription(
        name: "gofit", vendor: "GOLiFE",
        summary: "GOLiFE GoFIT / Care-X fitness bands: steps, sleep, heart rate and SpO2 history, settings, find my band",
        advertisement: AdvertisementDescription(serviceUUIDs: [GoFITUUID.service], namePrefixes: ["Care-X", "GoFIT"]),
        events: [
            EventDescription("find_phone", "The band's find-my-phone was pressed"),
            EventDescription("pairing_required", "The band has no key of this gateway (new, reset, or paired elsewhere): pair it"),
        ],
        commands: [
            CommandDescription(PairingMethod.showCodeCommand, "Ask the band to show a pairing code (bridge/request/device/pair runs it)",
                               route: .pairing),
            CommandDescription(PairingMethod.confirmCodeCommand, "Pair with the code the band shows (bridge/request/device/pair/confirm runs it)",
                               arguments: [ArgumentDescription("code", .text, required: true, "the code on the band's screen")], route: .pairing),
            .settings, .sync, .findByVibrations, .refresh, .timeSync, .clearData, .factoryReset,
        ] + CommandDescription.linkCommands + CommandDescription.firmwareUpdateCommands,
        settings: settingsOfEveryBand,
        recordKinds: ["steps", "sleep", "heart_rate", "spo2", "activity"],
        firmwareUpdate: FirmwareUpdateDescription(.nordicDFU),
        pairing: .codeShownOnDevice)
}
