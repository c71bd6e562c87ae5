import Testing

@testable import Wearables

/// `request/configure` for a Link reads like seed 004: the SDK's own JSON is accepted as-is, the contract's form
/// too, and errors carry the SDK's code as `vendor_code`.
@Suite("ActiGraph configuration requests and SDK dates")
struct ActiGraphConfigurationTests {
    static let current = ActiGraphStreamSettings(rawStreaming: false, rawRateHz: 30, imu: [.accelerometer])

    static func parse(_ request: DeviceValue) throws(CommandError) -> ActiGraphConfigurationRequest {
        try ActiGraphConfigurationRequest.parse(request.object ?? [:], current: current)
    }

    static func expectError(_ request: DeviceValue, vendorCode: Int, naming field: String,
                            sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let parsed = try parse(request)
            Issue.record("\(request) was accepted as \(parsed)", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == .invalidValue, sourceLocation: sourceLocation)
            #expect(error.vendorCode == vendorCode, "\(error)", sourceLocation: sourceLocation)
            #expect(error.names(field), "\(error)", sourceLocation: sourceLocation)
        }
    }

    // MARK: SDK dates

    @Test("\"07-21-2015 04:05:00\" is 1437451500 and prints back the same")
    func sdkDate() {
        #expect(ActiGraphSDKDate.unixSeconds(from: "07-21-2015 04:05:00") == 1_437_451_500)
        #expect(ActiGraphSDKDate.unixSeconds(from: "01-01-1970 00:00:00") == 0)
        #expect(ActiGraphSDKDate.unixSeconds(from: "02-29-2016 23:59:59") == 1_456_790_399)
        #expect(ActiGraphSDKDate.unixSeconds(from: "02-29-2000 00:00:00") == 951_782_400)
        #expect(ActiGraphSDKDate.unixSeconds(from: "12-31-2099 23:59:59") == 4_102_444_799)
        #expect(ActiGraphSDKDate.text(fromUnixSeconds: 1_437_451_500) == "07-21-2015 04:05:00")
        #expect(ActiGraphSDKDate.text(fromUnixSeconds: 0) == "01-01-1970 00:00:00")
        #expect(ActiGraphSDKDate.text(fromUnixSeconds: 1_456_790_399) == "02-29-2016 23:59:59")
        #expect(ActiGraphSDKDate.text(fromUnixSeconds: -1) == "12-31-1969 23:59:59")
        for seconds: Int64 in stride(from: 0, to: 4_294_967_295, by: 86_399 * 37) {
            #expect(ActiGraphSDKDate.unixSeconds(from: ActiGraphSDKDate.text(fromUnixSeconds: seconds)) == seconds)
        }
    }

    @Test("dates that are not real or not strictly MM-dd-yyyy HH:mm:ss are refused")
    func badDates() {
        for text in [
            "02-30-2015 00:00:00", "02-29-2015 00:00:00", "02-29-1900 00:00:00", "04-31-2015 00:00:00",
            "7-21-2015 04:05:00", "07-21-2015 4:05:00", "07-21-2015 24:00:00", "07-21-2015 04:60:00",
            "07-21-2015 04:05:60", "13-01-2015 00:00:00", "00-10-2015 00:00:00", "07-00-2015 00:00:00",
            "2015-07-21 04:05:00", "07/21/2015 04:05:00", "07-21-2015T04:05:00", "07-21-2015 04:05:00Z",
            "+7-21-2015 04:05:00", "07-21-2015 04:05", "", "٠٧-21-2015 04:05:00",
        ] {
            #expect(ActiGraphSDKDate.unixSeconds(from: text) == nil, "\(text)")
        }
    }

    // MARK: The SDK's JSON as-is

    @Test("seed 004's {\"raw\":{\"stream\":true}} starts raw streaming and is echoed back unchanged")
    func sdkRaw() throws {
        let request: DeviceValue = ["raw": ["stream": true]]
        let parsed = try Self.parse(request)
        #expect(parsed.streams == ActiGraphStreamSettings(rawStreaming: true, rawRateHz: 30, imu: [.accelerometer]))
        #expect(parsed.epochRange == nil)
        #expect(parsed.echo == request)
        #expect(try Self.parse(["raw": ["stream": false]]).streams?.rawStreaming == false)
    }

    @Test("seed 004's imu request sets the mask; a partial one keeps the other sensors")
    func sdkIMU() throws {
        let request: DeviceValue = ["imu": ["accelerometer": false, "gyroscope": true, "magnetometer": false, "temperature": true]]
        let parsed = try Self.parse(request)
        #expect(parsed.streams == ActiGraphStreamSettings(rawStreaming: false, rawRateHz: 30, imu: [.gyroscope, .temperature]))
        #expect(parsed.echo == request)
        let partial = try Self.parse(["imu": ["magnetometer": true]])
        #expect(partial.streams?.imu == [.accelerometer, .magnetometer])
        #expect(partial.echo == ["imu": ["accelerometer": true, "gyroscope": false, "magnetometer": true, "temperature": false]])
    }

    @Test("seed 004's epoch request becomes EPOCH_OPEN 1437451500…1437451560 and changes no stream")
    func sdkEpoch() throws {
        let request: DeviceValue = ["epoch": ["startDateTime": "07-21-2015 04:05:00", "stopDateTime": "07-21-2015 04:06:00"]]
        let parsed = try Self.parse(request)
        #expect(parsed.epochRange == ActiGraphEpochRange(start: 1_437_451_500, stop: 1_437_451_560))
        #expect(parsed.streams == nil)
        #expect(parsed.echo == request)
        let oneMinute = try Self.parse(["epoch": ["startDateTime": "07-21-2015 04:05:00", "stopDateTime": "07-21-2015 04:05:00"]])
        #expect(oneMinute.epochRange == ActiGraphEpochRange(start: 1_437_451_500, stop: 1_437_451_500))
    }

    // MARK: The contract's form

    @Test("sensors.<name>.enabled switches IMU sensors, accelerometer.rate_hz sets the raw rate, raw_stream the stream")
    func contractForm() throws {
        let parsed = try Self.parse([
            "sensors": ["accelerometer": ["rate_hz": 100, "enabled": false], "gyroscope": ["enabled": true], "temperature": ["enabled": true]],
            "raw_stream": true,
        ])
        #expect(parsed.streams == ActiGraphStreamSettings(rawStreaming: true, rawRateHz: 100, imu: [.gyroscope, .temperature]))
        #expect(parsed.echo == [
            "raw": ["stream": true],
            "imu": ["accelerometer": false, "gyroscope": true, "magnetometer": false, "temperature": true],
        ])
        let rateOnly = try Self.parse(["sensors": ["accelerometer": ["rate_hz": 50]]])
        #expect(rateOnly.streams == ActiGraphStreamSettings(rawStreaming: false, rawRateHz: 50, imu: [.accelerometer]))
        #expect(rateOnly.echo == ["raw": ["stream": false]])
        #expect(try Self.parse(["raw_stream": true, "raw": ["stream": true]]).streams?.rawStreaming == true)
    }

    // MARK: Errors

    @Test("unknown keys at any level are all named, as the SDK's \"inu, mageenetometer\", with vendor_code 3")
    func unknownKeys() {
        Self.expectError(["inu": ["accelerometer": true], "imu": ["mageenetometer": false, "gyroscope": true]],
                         vendorCode: 3, naming: "inu, mageenetometer")
        Self.expectError(["raw": ["stream": true, "rate": 50]], vendorCode: 3, naming: "rate")
        Self.expectError(["sensors": ["gyroscope": ["rate_hz": 50], "heart_rate": ["enabled": true]]],
                         vendorCode: 3, naming: "heart_rate, rate_hz")
        Self.expectError(["epoch": ["startdatetime": "07-21-2015 04:05:00", "stopDateTime": "07-21-2015 04:06:00"]],
                         vendorCode: 3, naming: "startdatetime")
        Self.expectError([:], vendorCode: 3, naming: "configure")
    }

    @Test("wrong types, missing fields and contradictions name the field with vendor_code 3")
    func wrongTypes() {
        Self.expectError(["raw": ["stream": "yes"]], vendorCode: 3, naming: "raw.stream")
        Self.expectError(["raw": ["stream": 1]], vendorCode: 3, naming: "raw.stream")
        Self.expectError(["raw": true], vendorCode: 3, naming: "raw")
        Self.expectError(["raw": [:]], vendorCode: 3, naming: "raw.stream")
        Self.expectError(["imu": ["gyroscope": nil]], vendorCode: 3, naming: "imu.gyroscope")
        Self.expectError(["imu": [:]], vendorCode: 3, naming: "imu")
        Self.expectError(["raw_stream": "on"], vendorCode: 3, naming: "raw_stream")
        Self.expectError(["sensors": ["accelerometer": ["rate_hz": "fast"]]], vendorCode: 3, naming: "sensors.accelerometer.rate_hz")
        Self.expectError(["sensors": ["gyroscope": true]], vendorCode: 3, naming: "sensors.gyroscope")
        Self.expectError(["epoch": ["startDateTime": 1_437_451_500, "stopDateTime": "07-21-2015 04:06:00"]],
                         vendorCode: 3, naming: "epoch.startDateTime")
        Self.expectError(["epoch": ["startDateTime": "07-21-2015 04:05:00"]], vendorCode: 3, naming: "epoch.stopDateTime")
        Self.expectError(["raw": ["stream": true], "raw_stream": false], vendorCode: 3, naming: "raw_stream")
        Self.expectError(["imu": ["gyroscope": true], "sensors": ["gyroscope": ["enabled": false]]],
                         vendorCode: 3, naming: "sensors.gyroscope.enabled")
    }

    @Test("a bad date or a start after its stop answers INVALID_VALUE with vendor_code 8")
    func badEpochRequests() {
        for bad in ["02-30-2015 00:00:00", "7-21-2015 04:05:00", "07-21-2015 24:00:00"] {
            Self.expectError(["epoch": ["startDateTime": .text(bad), "stopDateTime": "07-21-2015 04:06:00"]],
                             vendorCode: 8, naming: "epoch.startDateTime")
            Self.expectError(["epoch": ["startDateTime": "07-21-2015 04:05:00", "stopDateTime": .text(bad)]],
                             vendorCode: 8, naming: "epoch.stopDateTime")
        }
        Self.expectError(["epoch": ["startDateTime": "07-21-2015 04:06:00", "stopDateTime": "07-21-2015 04:05:59"]],
                         vendorCode: 8, naming: "epoch")
        Self.expectError(["epoch": ["startDateTime": "12-31-1969 23:59:59", "stopDateTime": "07-21-2015 04:05:00"]],
                         vendorCode: 8, naming: "epoch.startDateTime")
        Self.expectError(["epoch": ["startDateTime": "07-21-2015 04:05:00", "stopDateTime": "02-07-2106 06:28:16"]],
                         vendorCode: 8, naming: "epoch.stopDateTime")
    }

    @Test("a raw rate outside 30–100 Hz answers INVALID_VALUE with vendor_code 11; 30 and 100 are accepted")
    func rawRateRange() throws {
        for rate: Int64 in [29, 101, 0, -30, 1000] {
            Self.expectError(["sensors": ["accelerometer": ["rate_hz": .integer(rate)]]], vendorCode: 11,
                             naming: "sensors.accelerometer.rate_hz")
        }
        #expect(try Self.parse(["sensors": ["accelerometer": ["rate_hz": 30]]]).streams?.rawRateHz == 30)
        #expect(try Self.parse(["sensors": ["accelerometer": ["rate_hz": 100.0]]]).streams?.rawRateHz == 100)
    }
}
