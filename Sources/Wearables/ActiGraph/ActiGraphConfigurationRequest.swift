/// `request/configure` for an ActiGraph Link, validated into what the driver sends: new stream settings for
/// `SET_STREAMS` and/or an epoch range for `EPOCH_OPEN`. Nothing is sent when this throws, so a bad request
/// changes nothing.
///
/// Accepts the SDK's JSON unchanged (seed 004) — `{"raw":{"stream":true}}`, `{"imu":{"gyroscope":true,…}}`
/// (any subset of the four sensors), `{"epoch":{"startDateTime":"07-21-2015 04:05:00","stopDateTime":…}}` — and
/// the contract's `{"sensors":{"accelerometer":{"rate_hz":100,"enabled":true},"gyroscope":{"enabled":true},…},
/// "raw_stream":true}`, where `enabled` switches the IMU sensor and the accelerometer's `rate_hz` is the raw
/// rate. Forms may be mixed; one setting given twice with different values is refused.
///
/// Errors are `INVALID_VALUE` with the SDK's code as `vendorCode`: 3 for unknown keys (all of them named, as the
/// SDK's `extra` does), wrong types and missing fields; 8 for a date that is not one or a start after its stop;
/// 11 for a raw rate the Link cannot run. It does not check the range against the Link's stored epochs: the
/// Link answers that (status 0x88).
public struct ActiGraphConfigurationRequest: Sendable, Equatable {
    /// The settings to write, nil when the request changes no stream.
    public var streams: ActiGraphStreamSettings?
    /// The epochs to download, nil when the request asks for none.
    public var epochRange: ActiGraphEpochRange?
    /// Whether the request named raw streaming or its rate, so `echo` answers with `raw`.
    public var touchesRaw: Bool
    /// Whether the request named an IMU sensor, so `echo` answers with `imu`.
    public var touchesIMU: Bool

    public init(streams: ActiGraphStreamSettings?, epochRange: ActiGraphEpochRange?, touchesRaw: Bool, touchesIMU: Bool) {
        self.streams = streams
        self.epochRange = epochRange
        self.touchesRaw = touchesRaw
        self.touchesIMU = touchesIMU
    }

    /// The SDK's answer to a successful configuration: the sections the request touched, with the settings now
    /// in force — `{"raw":{"stream":true}}`, `{"imu":{…all four…}}`, `{"epoch":{"startDateTime",
    /// "stopDateTime"}}`.
    public var echo: DeviceValue {
        var answer: [String: DeviceValue] = [:]
        if let streams {
            if touchesRaw { answer["raw"] = .object(["stream": .flag(streams.rawStreaming)]) }
            if touchesIMU {
                var imu: [String: DeviceValue] = [:]
                for sensor in ActiGraphIMUSensor.allCases { imu[sensor.name] = .flag(streams.imu.contains(.init(sensor))) }
                answer["imu"] = .object(imu)
            }
        }
        if let epochRange {
            answer["epoch"] = .object([
                "startDateTime": .text(ActiGraphSDKDate.text(fromUnixSeconds: Int64(epochRange.start))),
                "stopDateTime": .text(ActiGraphSDKDate.text(fromUnixSeconds: Int64(epochRange.stop))),
            ])
        }
        return .object(answer)
    }

    /// SDK error codes (seed 004) the validation answers with.
    static let unrecognizedConfiguration = 3
    static let dateFormatError = 8
    static let configurationFailed = 11

    static let topLevelKeys: Set<String> = ["raw", "imu", "epoch", "sensors", "raw_stream"]
    static let rawKeys: Set<String> = ["stream"]
    static let imuKeys = Set(ActiGraphIMUSensor.allCases.map(\.name))
    static let epochKeys: Set<String> = ["startDateTime", "stopDateTime"]

    public static func parse(_ request: [String: DeviceValue], current: ActiGraphStreamSettings) throws(CommandError) -> ActiGraphConfigurationRequest {
        let unknown = unknownKeys(in: request)
        guard unknown.isEmpty else {
            throw invalid(unknown.joined(separator: ", "),
                          "unrecognized configuration; an ActiGraph Link takes raw, imu, epoch, sensors and raw_stream",
                          unrecognizedConfiguration)
        }
        guard !request.isEmpty else { throw invalid("configure", "names nothing to configure", unrecognizedConfiguration) }

        var rawStreaming: Setting<Bool> = Setting()
        var rate: Setting<UInt8> = Setting()
        var imu: [ActiGraphIMUSensor: Setting<Bool>] = [:]

        if let raw = try section(request, "raw") {
            guard let value = raw["stream"] else { throw invalid("raw.stream", "is required", unrecognizedConfiguration) }
            try rawStreaming.set(try flag(value, "raw.stream"), "raw.stream")
        }
        if let section = try section(request, "imu") {
            guard !section.isEmpty else { throw invalid("imu", "names no sensor", unrecognizedConfiguration) }
            for sensor in ActiGraphIMUSensor.allCases {
                guard let value = section[sensor.name] else { continue }
                let field = "imu.\(sensor.name)"
                try imu[sensor, default: Setting()].set(try flag(value, field), field)
            }
        }
        if let value = request["raw_stream"] {
            try rawStreaming.set(try flag(value, "raw_stream"), "raw_stream")
        }
        if let sensors = try section(request, "sensors") {
            guard !sensors.isEmpty else { throw invalid("sensors", "names no sensor", unrecognizedConfiguration) }
            for sensor in ActiGraphIMUSensor.allCases {
                let field = "sensors.\(sensor.name)"
                guard let settings = try section(sensors, sensor.name, field: field) else { continue }
                guard !settings.isEmpty else {
                    throw invalid(field, sensor == .accelerometer ? "needs enabled or rate_hz" : "needs enabled", unrecognizedConfiguration)
                }
                if let value = settings["enabled"] {
                    try imu[sensor, default: Setting()].set(try flag(value, "\(field).enabled"), "\(field).enabled")
                }
                if let value = settings["rate_hz"] {
                    try rate.set(try rawRate(value, "\(field).rate_hz"), "\(field).rate_hz")
                }
            }
        }

        var epochRange: ActiGraphEpochRange?
        if let epoch = try section(request, "epoch") { epochRange = try range(epoch) }

        let touchesRaw = rawStreaming.value != nil || rate.value != nil
        let touchesIMU = !imu.isEmpty
        var streams: ActiGraphStreamSettings?
        if touchesRaw || touchesIMU {
            var settings = current
            if let value = rawStreaming.value { settings.rawStreaming = value }
            if let value = rate.value { settings.rawRateHz = value }
            for (sensor, setting) in imu {
                guard let enabled = setting.value else { continue }
                if enabled { settings.imu.insert(.init(sensor)) } else { settings.imu.remove(.init(sensor)) }
            }
            streams = settings
        }
        return ActiGraphConfigurationRequest(streams: streams, epochRange: epochRange, touchesRaw: touchesRaw,
                                             touchesIMU: touchesIMU)
    }

    /// Every key the request's known structure does not have, top level first, each level in sorted order;
    /// sections that are unknown themselves or not objects are not looked into.
    static func unknownKeys(in request: [String: DeviceValue]) -> [String] {
        var unknown = request.keys.sorted().filter { !topLevelKeys.contains($0) }
        func check(_ value: DeviceValue?, _ allowed: Set<String>) -> [String: DeviceValue]? {
            guard let object = value?.object else { return nil }
            unknown += object.keys.sorted().filter { !allowed.contains($0) }
            return object
        }
        _ = check(request["raw"], rawKeys)
        _ = check(request["imu"], imuKeys)
        _ = check(request["epoch"], epochKeys)
        if let sensors = check(request["sensors"], imuKeys) {
            for sensor in ActiGraphIMUSensor.allCases {
                _ = check(sensors[sensor.name], sensor == .accelerometer ? ["enabled", "rate_hz"] : ["enabled"])
            }
        }
        return unknown
    }

    private static func range(_ epoch: [String: DeviceValue]) throws(CommandError) -> ActiGraphEpochRange {
        func seconds(_ key: String) throws(CommandError) -> UInt32 {
            let field = "epoch.\(key)"
            guard let value = epoch[key] else { throw invalid(field, "is required", unrecognizedConfiguration) }
            guard let text = value.text else {
                throw invalid(field, "must be a date string \"MM-dd-yyyy HH:mm:ss\"", unrecognizedConfiguration)
            }
            guard let seconds = ActiGraphSDKDate.unixSeconds(from: text) else {
                throw invalid(field, "\"\(text)\" is not a UTC date and time \"MM-dd-yyyy HH:mm:ss\"", dateFormatError)
            }
            guard let clock = UInt32(exactly: seconds) else {
                throw invalid(field, "\"\(text)\" is outside the Link's clock (1970 to 2106)", dateFormatError)
            }
            return clock
        }
        let start = try seconds("startDateTime")
        let stop = try seconds("stopDateTime")
        guard start <= stop else {
            throw invalid("epoch", "startDateTime is after stopDateTime", dateFormatError)
        }
        return ActiGraphEpochRange(start: start, stop: stop)
    }

    private static func section(_ object: [String: DeviceValue], _ key: String, field: String? = nil) throws(CommandError) -> [String: DeviceValue]? {
        guard let value = object[key] else { return nil }
        guard let section = value.object else {
            throw invalid(field ?? key, "must be a JSON object", unrecognizedConfiguration)
        }
        return section
    }

    private static func flag(_ value: DeviceValue, _ field: String) throws(CommandError) -> Bool {
        guard let flag = value.flag else { throw invalid(field, "must be true or false", unrecognizedConfiguration) }
        return flag
    }

    private static func rawRate(_ value: DeviceValue, _ field: String) throws(CommandError) -> UInt8 {
        let rates = ActiGraphStreamSettings.rawRates
        guard let number = value.integer else {
            throw invalid(field, "must be an integer number of Hz (\(rates.lowerBound)–\(rates.upperBound))", unrecognizedConfiguration)
        }
        guard number >= Int64(rates.lowerBound), number <= Int64(rates.upperBound) else {
            throw invalid(field, "\(number) Hz is not offered; the Link samples raw acceleration at \(rates.lowerBound)–\(rates.upperBound) Hz",
                          configurationFailed)
        }
        return UInt8(number)
    }

    static func invalid(_ field: String, _ message: String, _ vendorCode: Int) -> CommandError {
        var error = CommandError.invalidValue(field: field, message)
        error.vendorCode = vendorCode
        return error
    }

    /// One setting that the request may name in both forms; naming it twice must agree.
    private struct Setting<Value: Equatable> {
        var value: Value?
        var field: String?

        mutating func set(_ newValue: Value, _ newField: String) throws(CommandError) {
            if let value, let field, value != newValue {
                throw ActiGraphConfigurationRequest.invalid(newField, "contradicts \(field)", ActiGraphConfigurationRequest.unrecognizedConfiguration)
            }
            value = newValue
            field = newField
        }
    }
}
