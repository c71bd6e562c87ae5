import Wearables

/// The registered drivers' descriptions as the surfaces outside the gateway read them: one JSON array
/// (`wear2mqtt drivers`) and docs/devices.md (`wear2mqtt drivers --markdown`, kept current by a test).
public enum DriverCatalog {
    public static func json(_ registry: DriverRegistry = WearableDrivers.all) -> [UInt8] {
        JSONWriter.encode(.list(registry.drivers.map { driver in driver.driverDescription.deviceValue }))
    }

    public static func markdown(_ registry: DriverRegistry = WearableDrivers.all) -> String {
        var text = """
            # Devices

            Generated from the drivers' descriptions by `wear2mqtt drivers --markdown` (a test fails when this file is
            not current). The same descriptions are in `bridge/devices` (each entry's `definition`, docs/mqtt-api.md)
            and `wear2mqtt drivers` (JSON).

            """
        for driver in registry.drivers { text += "\n" + section(driver.driverDescription) }
        return text
    }

    static func section(_ description: DriverDescription) -> String {
        var lines = ["## \(description.vendor) (`\(description.name)`)", "", description.summary + ".", ""]
        lines.append("- Recognised by: " + recognition(description.advertisement))
        lines.append("- Pairing: " + pairing(description.pairing))
        if let update = description.firmwareUpdate {
            lines.append("- Firmware update: Nordic DFU (`request/dfu`)" + (update.note.map { "; afterwards: \($0)" } ?? ""))
        }
        if !description.recordKinds.isEmpty {
            lines.append("- Records: " + description.recordKinds.map { "`fitness/\($0)`" }.joined(separator: ", "))
        }
        lines.append("")
        if !description.sensors.isEmpty {
            lines += ["| sensor | shape | unit | rate (Hz) | sent |", "| --- | --- | --- | --- | --- |"]
            for sensor in description.sensors {
                let rates = sensor.ratesHz.map { $0.rounded() == $0 ? String(Int($0)) : String($0) }.joined(separator: ", ")
                lines.append("| `sensor/\(sensor.kind.rawValue)` | \(sensor.kind.shape.rawValue) | \(sensor.unit ?? "") | \(rates) | \(presence(sensor.presence)) |")
            }
            lines.append("")
        }
        if !description.events.isEmpty {
            lines += ["| event | actions | when |", "| --- | --- | --- |"]
            for event in description.events {
                let actions = event.actions.map { "`\($0)`" }.joined(separator: ", ")
                let when = event.summary + (event.service.map { " (devices with the 0x\($0) service)" } ?? "")
                lines.append("| `\(event.name)` | \(actions) | \(when) |")
            }
            lines.append("")
        }
        lines += ["| command | fields | notes |", "| --- | --- | --- |"]
        for command in description.commands.sorted(by: { $0.name < $1.name }) {
            var fields = command.arguments.map(argument)
            if command.acceptsOtherFields { fields.append("others, read by the driver") }
            var notes = [command.summary]
            if let guarded = command.allow { notes.append("needs `allow.\(guarded.rawValue)`") }
            switch command.duration {
            case .quick: break
            case .long: notes.append("long-running")
            case .longWhen(let field, let values):
                notes.append("long-running when `\(field)`" + (values.map { " is " + $0.map { "`\($0)`" }.joined(separator: " or ") } ?? " is given"))
            }
            if command.reportsProgress { notes.append("reports progress") }
            if command.route == .pairing { notes.append("run by `bridge/request/device/pair`") }
            lines.append("| `\(command.name)` | \(fields.joined(separator: "; ")) | \(notes.joined(separator: "; ")) |")
        }
        lines.append("")
        if !description.settings.isEmpty {
            lines += ["| setting | type | command |", "| --- | --- | --- |"]
            for setting in description.settings {
                lines.append("| `\(setting.key)` (\(setting.name)) | \(settingKind(setting.kind)) | `\(setting.command)` |")
            }
            lines.append("")
        }
        return lines.joined(separator: "\n")
    }

    static func recognition(_ advertisement: AdvertisementDescription) -> String {
        var parts: [String] = []
        if !advertisement.serviceUUIDs.isEmpty {
            parts.append("service " + advertisement.serviceUUIDs.map { "`\($0)`" }.joined(separator: ", "))
        }
        if !advertisement.namePrefixes.isEmpty {
            parts.append("a name starting " + advertisement.namePrefixes.map { "`\($0)`" }.joined(separator: " or "))
        }
        if advertisement.isFallback { parts.append("and any device no other driver claims") }
        return parts.joined(separator: "; ")
    }

    static func pairing(_ method: PairingMethod) -> String {
        switch method {
        case .none: "none needed"
        case .passkey: "a passkey the device shows, typed in (`device/pair`, then `device/pair/confirm`)"
        case .codeShownOnDevice: "a code the device shows, read back (`device/pair`, then `device/pair/confirm`)"
        case .keyEnteredByUser: "a key the user enters (`device/pair/confirm`)"
        }
    }

    static func presence(_ presence: SensorDescription.Presence) -> String {
        switch presence {
        case .always: "always"
        case .whenConfigured: "once configured"
        case .whenService(let service): "with the 0x\(service) service"
        }
    }

    static func argument(_ argument: ArgumentDescription) -> String {
        let kind: String
        switch argument.kind {
        case .integer(let range): kind = range.map { "integer \($0.lowerBound)…\($0.upperBound)" } ?? "integer"
        case .number(let range): kind = range.map { "number \($0.lowerBound)…\($0.upperBound)" } ?? "number"
        case .text: kind = "text"
        case .choice(let options): kind = options.count <= 8 ? options.joined(separator: " / ") : "one of \(options.count) names"
        case .flag: kind = "true / false"
        case .timestamp: kind = "Unix ms"
        case .object: kind = "object"
        case .list: kind = "list"
        }
        return "`\(argument.name)`\(argument.required ? " (required)" : ""): \(kind)"
    }

    static func settingKind(_ kind: SettingDescription.Kind) -> String {
        switch kind {
        case .number(let range, _, let unit): "\(range.lowerBound)…\(range.upperBound)" + (unit.map { " \($0)" } ?? "")
        case .choice(let options): options.joined(separator: " / ")
        case .numberChoice(let options, let unit): options.map(String.init).joined(separator: " / ") + (unit.map { " \($0)" } ?? "")
        case .toggle: "on / off"
        }
    }
}
