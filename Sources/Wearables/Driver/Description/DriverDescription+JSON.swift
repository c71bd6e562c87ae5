/// A description as JSON (`bridge/devices`' `definition`, `wear2mqtt drivers`): the same value any client reads.
/// Keys are the contract's snake_case; absent facts are left out rather than null.
extension DriverDescription {
    public var deviceValue: DeviceValue {
        var object: [String: DeviceValue] = [
            "driver": .text(name), "vendor": .text(vendor), "summary": .text(summary),
            "advertisement": advertisement.deviceValue,
            "sensors": .list(sensors.map(\.deviceValue)),
            "events": .list(events.map(\.deviceValue)),
            "commands": .list(commands.sorted { $0.name < $1.name }.map(\.deviceValue)),
            "settings": .list(settings.map(\.deviceValue)),
            "record_kinds": .list(recordKinds.map(DeviceValue.text)),
            "only_syncs": .flag(onlySyncs),
            "pairing": .text(pairing.rawValue),
            "status_flags": .list(statusFlags.map(\.deviceValue)),
        ]
        if let firmwareUpdate {
            var update: [String: DeviceValue] = ["method": .text(firmwareUpdate.method.rawValue)]
            if let note = firmwareUpdate.note { update["note"] = .text(note) }
            object["firmware_update"] = .object(update)
        }
        return .object(object)
    }
}

extension AdvertisementDescription {
    var deviceValue: DeviceValue {
        .object([
            "service_uuids": .list(serviceUUIDs.map(DeviceValue.text)), "name_prefixes": .list(namePrefixes.map(DeviceValue.text)),
            "manufacturer_ids": .list(manufacturerIDs.map { .integer(Int64($0)) }), "fallback": .flag(isFallback),
        ])
    }
}

extension SensorDescription {
    var deviceValue: DeviceValue {
        var object: [String: DeviceValue] = [
            "key": .text(kind.rawValue), "shape": .text(kind.shape.rawValue), "fields": .list(kind.fields.map(DeviceValue.text)),
            "rates_hz": .list(ratesHz.map(DeviceValue.number)),
        ]
        if let unit { object["unit"] = .text(unit) }
        switch presence {
        case .always: object["presence"] = "always"
        case .whenConfigured: object["presence"] = "when_configured"
        case .whenService(let service):
            object["presence"] = "when_service"
            object["service"] = .text(service)
        }
        return .object(object)
    }
}

extension EventDescription {
    var deviceValue: DeviceValue {
        var object: [String: DeviceValue] = ["name": .text(name), "summary": .text(summary), "actions": .list(actions.map(DeviceValue.text))]
        if let service { object["service"] = .text(service) }
        return .object(object)
    }
}

extension CommandDescription {
    var deviceValue: DeviceValue {
        var object: [String: DeviceValue] = [
            "name": .text(name), "summary": .text(summary), "arguments": .list(arguments.map(\.deviceValue)),
            "other_fields": .flag(acceptsOtherFields), "reports_progress": .flag(reportsProgress),
        ]
        if let allow { object["allow"] = .text(allow.rawValue) }
        switch duration {
        case .quick: object["long_running"] = false
        case .long: object["long_running"] = true
        case .longWhen(let field, let values):
            var when: [String: DeviceValue] = ["field": .text(field)]
            if let values { when["values"] = .list(values.map(DeviceValue.text)) }
            object["long_running"] = .object(when)
        }
        return .object(object)
    }
}

extension ArgumentDescription {
    var deviceValue: DeviceValue {
        var object: [String: DeviceValue] = ["name": .text(name), "required": .flag(required), "summary": .text(summary)]
        switch kind {
        case .integer(let range):
            object["type"] = "integer"
            if let range { object["min"] = .integer(range.lowerBound); object["max"] = .integer(range.upperBound) }
        case .number(let range):
            object["type"] = "number"
            if let range { object["min"] = .number(range.lowerBound); object["max"] = .number(range.upperBound) }
        case .text: object["type"] = "string"
        case .choice(let options):
            object["type"] = "choice"
            object["options"] = .list(options.map(DeviceValue.text))
        case .flag: object["type"] = "boolean"
        case .timestamp: object["type"] = "timestamp_ms"
        case .object: object["type"] = "object"
        case .list: object["type"] = "list"
        }
        return .object(object)
    }
}

extension SettingDescription {
    public var deviceValue: DeviceValue {
        var object: [String: DeviceValue] = [
            "key": .text(key), "name": .text(name), "command": .text(command),
            "request_path": .list(requestPath.map(DeviceValue.text)), "state_path": .list(statePath.map(DeviceValue.text)),
        ]
        switch kind {
        case .number(let range, let step, let unit):
            object["type"] = "integer"
            object["min"] = .integer(range.lowerBound)
            object["max"] = .integer(range.upperBound)
            object["step"] = .integer(step)
            if let unit { object["unit"] = .text(unit) }
        case .choice(let options):
            object["type"] = "choice"
            object["options"] = .list(options.map(DeviceValue.text))
        case .numberChoice(let options, let unit):
            object["type"] = "integer_choice"
            object["options"] = .list(options.map(DeviceValue.integer))
            if let unit { object["unit"] = .text(unit) }
        case .toggle: object["type"] = "boolean"
        }
        return .object(object)
    }
}

extension StatusFlagDescription {
    var deviceValue: DeviceValue {
        var object: [String: DeviceValue] = [
            "key": .text(key), "name": .text(name), "state_path": .list(statePath.map(DeviceValue.text)),
            "capability_path": .list(capabilityPath.map(DeviceValue.text)),
        ]
        if let icon { object["icon"] = .text(icon) }
        return .object(object)
    }
}
