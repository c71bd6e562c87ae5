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

        let reader = RequestReader(request)
        if let raw = try unrecognized({ () throws(CommandError) in try reader.nested("raw") }) {
            let stream = try unrecognized { () throws(CommandError) in
                try raw.required(try raw.bool("stream"), "stream", "true to stream raw acceleration, false to stop")
            }
            try rawStreaming.set(stream, raw.name("stream"))
        }
        if let section = try unrecognized({ () throws(CommandError) in try reader.nested("imu") }) {
            guard !section.arguments.isEmpty else { throw invalid("imu", "names no sensor", unrecognizedConfiguration) }
            for sensor in ActiGraphIMUSensor.allCases {
                guard let enabled = try unrecognized({ () throws(CommandError) in try section.bool(sensor.name) }) else { continue }
                try imu[sensor, default: Setting()].set(enabled, section.name(sensor.name))
            }
        }
        if let enabled = try unrecognized({ () throws(CommandError) in try reader.bool("raw_stream") }) {
            try rawStreaming.set(enabled, "raw_stream")
        }
        if let sensors = try unrecognized({ () throws(CommandError) in try reader.nested("sensors") }) {
            guard !sensors.arguments.isEmpty else { throw invalid("sensors", "names no sensor", unrecognizedConfiguration) }
            for sensor in ActiGraphIMUSensor.allCases {
                guard let settings = try unrecognized({ () throws(CommandError) in try sensors.nested(sensor.name) }) else { continue }
                guard !settings.arguments.isEmpty else {
                    throw invalid(sensors.name(sensor.name), sensor == .accelerometer ? "needs enabled or rate_hz" : "needs enabled",
                                  unrecognizedConfiguration)
                }
                if let enabled = try unrecognized({ () throws(CommandError) in try settings.bool("enabled") }) {
                    try imu[sensor, default: Setting()].set(enabled, settings.name("enabled"))
                }
                if let hertz = try rawRate(settings) {
                    try rate.set(hertz, settings.name("rate_hz"))
                }
            }
        }

        var epochRange: ActiGraphEpochRange?
        if let epoch = try unrecognized({ () throws(CommandError) in try reader.object("epoch") }) { epochRange = try range(epoch) }

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

    /// A malformed field is the SDK's Unrecognized Configuration: the reader's error with that vendor code.
    private static func unrecognized<T>(_ read: () throws(CommandError) -> T) throws(CommandError) -> T {
        do { return try read() } catch {
            var refused = error
            refused.vendorCode = unrecognizedConfiguration
            throw refused
        }
    }

    /// `rate_hz`: not a whole number is Unrecognized Configuration; a rate the Link does not run, Configuration
    /// Failed.
    private static func rawRate(_ settings: RequestReader) throws(CommandError) -> UInt8? {
        let rates = ActiGraphStreamSettings.rawRates
        guard let number = try unrecognized({ () throws(CommandError) in
            try settings.integer("rate_hz", atLeast: Int64.min, meaning: "an integer number of Hz (\(rates.lowerBound)–\(rates.upperBound))")
        }) else { return nil }
        guard number >= Int64(rates.lowerBound), number <= Int64(rates.upperBound) else {
            throw invalid(settings.name("rate_hz"), "\(number) Hz is not offered; the Link samples raw acceleration at "
                          + "\(rates.lowerBound)–\(rates.upperBound) Hz", configurationFailed)
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
