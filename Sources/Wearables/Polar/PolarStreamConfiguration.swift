/// Which PMD streams should run and with which settings: what `request/configure` changes, what the driver keeps
/// for the device's lifetime and starts again on every connection (a Polar sensor stops its streams when the
/// link drops). Pure: a request in, a new configuration or the contract's `INVALID_VALUE` out.
///
/// The request is `{"sensors":{"<stream>":{"enabled":true,"rate_hz":130,"resolution":14,"range":8,"channels":3}}}`;
/// naming a stream enables it unless `enabled` is false, and streams not named keep what they had. Every setting
/// is checked against the list the device itself gave for that measurement (`PMDSettings.validate`); a setting
/// not given keeps its earlier choice, else takes the largest offered (the SDK's default selection).
public struct PolarStreamConfiguration: Sendable, Equatable {
    /// The running streams and the settings each is started with.
    public private(set) var enabled: [PolarStream: PMDSettingSelection]

    public init(enabled: [PolarStream: PMDSettingSelection] = [:]) {
        self.enabled = enabled
    }

    /// This configuration changed by `request`, checked against `offered` (the settings the device lists per
    /// stream; a stream it does not offer has no entry).
    public func applying(_ request: [String: DeviceValue], offered: [PolarStream: PMDSettings]) throws(CommandError) -> PolarStreamConfiguration {
        let reader = RequestReader(request)
        try reader.rejectUnknownFields(allowed: ["sensors"], request: "configure")
        guard let sensors = try reader.nested("sensors") else {
            throw CommandError(.invalidValue, "sensors is required: an object naming the streams to change, "
                               + "e.g. {\"sensors\":{\"ecg\":{\"enabled\":true}}}")
        }
        var next = self
        for key in sensors.arguments.keys.sorted() {
            guard let stream = PolarStream(rawValue: key) else {
                let names = RequestReader.list(PolarStream.allCases.map { "\"\($0.rawValue)\"" }, conjunction: "or")
                throw CommandError(.invalidValue, "\(sensors.name(key)) is not a Polar stream; the streams are \(names)")
            }
            guard let available = offered[stream] else {
                let names = offered.keys.sorted().map(\.rawValue)
                throw CommandError(.invalidValue, "\(sensors.name(key)): this device does not offer \(key); it offers "
                                   + (names.isEmpty ? "no streams" : RequestReader.list(names, conjunction: "and")))
            }
            guard let fields = try sensors.nested(key) else { continue }
            try fields.rejectUnknownFields(allowed: ["enabled"] + PolarStream.settingKeys.map(\.key), request: "a Polar stream")
            if try fields.bool("enabled") == false {
                next.enabled[stream] = nil
                continue
            }
            next.enabled[stream] = try selection(fields, earlier: enabled[stream], available: available)
        }
        return next
    }

    private func selection(_ fields: RequestReader, earlier: PMDSettingSelection?, available: PMDSettings) throws(CommandError) -> PMDSettingSelection {
        var chosen = PMDSettingSelection()
        for (key, type, unit) in PolarStream.settingKeys {
            let offered = available[type]
            if let value = try fields.integer(key, in: 0...65_535, unit: unit) {
                guard !offered.isEmpty else {
                    throw CommandError(.invalidValue, "\(fields.name(key)): this stream has no \(key) setting on this device")
                }
                guard offered.contains(Int(value)) else {
                    let values = RequestReader.list(offered.map(String.init), conjunction: "or")
                    throw fields.invalid(key, "must be \(offered.count == 1 ? "" : "one of ")\(values)\(unit) on this device",
                                         got: .integer(value))
                }
                chosen[type] = Int(value)
            } else if let previous = earlier?[type], offered.contains(previous) {
                chosen[type] = previous
            } else if let largest = offered.max() {
                chosen[type] = largest
            }
        }
        // Belt and braces: the same rule the codecs' validation states, so the two cannot drift apart.
        if let rejection = PMDSettings.validate(requested: chosen, against: available) {
            throw CommandError(.invalidValue, "\(fields.path)\(rejection.type): \(rejection.requested) is not offered")
        }
        return chosen
    }

    /// The request form of `stream`'s setting values, for the state and the answer.
    public static func describe(_ selection: PMDSettingSelection?) -> DeviceValue {
        guard let selection else { return .object(["enabled": .flag(false)]) }
        var object: [String: DeviceValue] = ["enabled": .flag(true)]
        for (key, type, _) in PolarStream.settingKeys {
            if let value = selection[type] { object[key] = .integer(Int64(value)) }
        }
        return .object(object)
    }

    /// What the device offers per stream, for the state's `capabilities`.
    public static func describe(offered: [PolarStream: PMDSettings]) -> DeviceValue {
        var streams: [String: DeviceValue] = [:]
        for (stream, settings) in offered {
            var object: [String: DeviceValue] = [:]
            for (key, type, _) in PolarStream.settingKeys where !settings[type].isEmpty {
                object[key] = .list(settings[type].map { .integer(Int64($0)) })
            }
            streams[stream.rawValue] = .object(object)
        }
        return .object(streams)
    }
}
