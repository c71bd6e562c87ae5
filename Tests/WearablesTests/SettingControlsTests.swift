import Testing

@testable import Wearables

/// A request as a control writes it: `value` at the setting's request path.
func controlRequest(_ setting: SettingDescription, _ value: DeviceValue) -> [String: DeviceValue] {
    setting.requestPath.dropFirst().reversed().reduce(value) { inner, key in .object([key: inner]) }
        .object.map { [setting.requestPath[0]: .object($0)] } ?? [setting.requestPath[0]: value]
}

/// The ActiGraph Link's and Bose devices' controls send only what their drivers' validation accepts.
@Suite struct SettingControlsTests {
    @Test func everyActiGraphControlValueIsAccepted() throws {
        let settings = ActiGraphDriver.settings(state: [:])
        #expect(settings.map(\.key) == ["raw_stream", "raw_rate", "imu_accelerometer", "imu_gyroscope", "imu_magnetometer", "imu_temperature"])
        for setting in settings {
            switch setting.kind {
            case .number(let range, _, _):
                for value in [range.lowerBound, range.upperBound] {
                    let parsed = try ActiGraphConfigurationRequest.parse(controlRequest(setting, .integer(value)), current: .off)
                    #expect(parsed.streams?.rawRateHz == UInt8(value))
                }
                #expect(throws: CommandError.self) {
                    try ActiGraphConfigurationRequest.parse(controlRequest(setting, .integer(range.upperBound + 1)), current: .off)
                }
            case .toggle:
                for flag in [true, false] {
                    let parsed = try ActiGraphConfigurationRequest.parse(controlRequest(setting, .flag(flag)), current: .off)
                    // The state path the control reads shows what the request set.
                    let state: DeviceValue = .object(parsed.streams!.sensorsState)
                    #expect(setting.statePath.dropFirst().reduce(state) { $0?[$1] } == .flag(flag), "\(setting.key)")
                }
            default:
                Issue.record("\(setting.key): unexpected kind")
            }
        }
    }

    @Test func boseControlsComeFromTheCapabilitiesInTheState() throws {
        let capabilities = BoseDesiredConfigurationTests().capabilities
        let settings = BoseWearableDriver.settings(state: capabilities.stateFields)
        #expect(settings.first?.kind == .numberChoice(options: [40, 80, 160, 320], unit: "ms"))
        #expect(settings.filter { $0.key.hasPrefix("sensor_") && $0.kind == .toggle }.count == 7)
        #expect(settings.filter { $0.key.hasPrefix("gesture_") }.map(\.name) == ["Double tap detection", "Head nod detection", "Head shake detection"])
        #expect(BoseWearableDriver.settings(state: [:]).isEmpty)
    }

    @Test func everyBoseControlValueIsAcceptedAloneAndWithSensorsRunning() throws {
        let capabilities = BoseDesiredConfigurationTests().capabilities
        let starts = [BoseDesiredConfiguration.none, BoseDesiredConfiguration(sensorPeriods: [.accelerometer: 40, .gyroscope: 40]),
                      BoseDesiredConfiguration(sensorPeriods: [.uncalibratedMagnetometer: 320], chosenPeriod: 320)]
        for start in starts {
            for setting in BoseWearableDriver.settings(state: capabilities.stateFields) {
                let values: [DeviceValue] = switch setting.kind {
                case .numberChoice(let options, _): options.map(DeviceValue.integer)
                case .toggle: [true, false]
                default: []
                }
                #expect(!values.isEmpty)
                for value in values {
                    let result = try start.applying(controlRequest(setting, value), to: capabilities)
                    if case .integer(let period) = value { #expect(result.sharedPeriod == UInt16(period)) }
                }
            }
        }
    }
}
