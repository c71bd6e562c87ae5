import Wearables

/// Settings as Home Assistant controls: a number, a select or a switch per setting a driver describes, each
/// writing the driver's own request (`request/settings`, `request/configure`) and reading the device's state
/// document, within the ranges the driver's validation accepts.
extension HomeAssistantDiscovery {
    func settingComponents(_ settings: [SettingDescription], id: String) -> [DiscoveryComponent] {
        settings.map { setting in
            let value = Self.template(statePath: setting.statePath)
            var options: [String: DeviceValue] = [
                "name": .text(setting.name), "entity_category": "config",
                "command_topic": .text(topics.deviceRequest(id, command: setting.command)),
                "state_topic": .text(topics.device(id)),
            ]
            let platform: String
            switch setting.kind {
            case .number(let range, let step, let unit):
                platform = "number"
                options["min"] = .integer(range.lowerBound)
                options["max"] = .integer(range.upperBound)
                options["step"] = .integer(step)
                options["mode"] = "box"
                if let unit { options["unit_of_measurement"] = .text(unit) }
                options["value_template"] = .text("{{ \(value) if \(Self.defined(setting.statePath)) else None }}")
                options["command_template"] = .text(Self.request(setting.requestPath, value: "{{ value | int }}"))
            case .choice(let choices):
                platform = "select"
                options["options"] = .list(choices.map(DeviceValue.text))
                options["value_template"] = .text("{{ \(value) if \(Self.defined(setting.statePath)) else None }}")
                options["command_template"] = .text(Self.request(setting.requestPath, value: "\"{{ value }}\""))
            case .numberChoice(let choices, _):
                platform = "select"
                options["options"] = .list(choices.map { .text(String($0)) })
                options["value_template"] = .text("{{ \(value) | string if \(Self.defined(setting.statePath)) and \(value) is not none else None }}")
                options["command_template"] = .text(Self.request(setting.requestPath, value: "{{ value | int }}"))
            case .toggle:
                platform = "switch"
                options["value_template"] = .text("{{ ('ON' if \(value) else 'OFF') if \(Self.defined(setting.statePath)) else None }}")
                options["state_on"] = "ON"
                options["state_off"] = "OFF"
                options["payload_on"] = .text(Self.request(setting.requestPath, value: "true"))
                options["payload_off"] = .text(Self.request(setting.requestPath, value: "false"))
            }
            return DiscoveryComponent("setting_\(setting.key)", platform: platform, options)
        }
    }

    /// `value_json['settings']['step_goal']`: keys in brackets, as Jinja would find a dict's method for `.update`,
    /// `.items` or `.values` before the key.
    static func template(statePath: [String]) -> String {
        "value_json" + statePath.map { "['\($0)']" }.joined()
    }

    /// `value_json['settings'] is defined and value_json['settings']['step_goal'] is defined`.
    static func defined(_ statePath: [String]) -> String {
        (1...statePath.count).map { "\(template(statePath: Array(statePath.prefix($0)))) is defined" }.joined(separator: " and ")
    }

    /// `{"gestures":{"double_tap":VALUE}}` for the request path, VALUE left as given (a template or a literal).
    static func request(_ path: [String], value: String) -> String {
        path.reversed().reduce(value) { inner, key in "{\"\(key)\":\(inner)}" }
    }
}
