import Testing

@testable import Wearables

/// `request/configure` for Bose devices is checked against what the device offers before anything is written.
@Suite struct BoseDesiredConfigurationTests {
    /// Frames-like: every sensor at 20…320 ms except the uncalibrated magnetometer (40…320 ms), three active at
    /// most, double tap / head nod / head shake.
    let capabilities: BoseCapabilities = {
        let allPeriods = BoseSamplePeriod.mask(of: BoseSamplePeriod.allCases)
        let entries = BoseSensor.allCases.map { sensor in
            BoseSensorInformation.Entry(
                sensorID: sensor.rawValue, minimumScaled: -16, maximumScaled: 16, minimumRaw: -32768, maximumRaw: 32767,
                availablePeriodsMask: sensor == .uncalibratedMagnetometer ? allPeriods & ~BoseSamplePeriod.milliseconds20.maskBit : allPeriods,
                sampleLength: UInt8(sensor.payloadLength))
        }
        return BoseCapabilities(
            device: BoseDeviceInformation(
                majorVersion: 1, minorVersion: 0, productID: 0x4020, variant: 1, availableSensorsMask: 0x7F,
                availableGesturesMask: 0b1110, transmissionPeriodMilliseconds: 20, maxPayloadPerTransmissionPeriod: 160,
                maxActiveSensors: 3, status: []),
            sensorInformation: BoseSensorInformation(entries: entries),
            gestureInformation: BoseGestureInformation(entries: [0x81, 0x82, 0x83].map { .init(gestureID: $0, configurationLength: 1) }))
    }()

    func apply(_ request: [String: DeviceValue], to start: BoseDesiredConfiguration = .none) throws(CommandError) -> BoseDesiredConfiguration {
        try start.applying(request, to: capabilities)
    }

    func expectInvalid(_ request: [String: DeviceValue], from start: BoseDesiredConfiguration = .none, field: String,
                       sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let result = try apply(request, to: start)
            Issue.record("accepted \(request) as \(result)", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == .invalidValue, sourceLocation: sourceLocation)
            #expect(error.names(field), "\(error.message)", sourceLocation: sourceLocation)
        }
    }

    @Test func theSDKsExampleEnablesAccelerometerAndGyroscopeAt20msAndDoubleTap() throws {
        let result = try apply(["sensors": ["accelerometer": ["period_ms": 20], "gyroscope": ["period_ms": 20]],
                                "gestures": ["double_tap": true]])
        #expect(result.sensorPeriods == [.accelerometer: 20, .gyroscope: 20])
        #expect(result.gestures == [.doubleTap])
        let wire = capabilities.sensorConfiguration(result.sensorPeriods)
        #expect(wire.entries.count == 7)
        #expect(wire.period(of: .accelerometer) == 20 && wire.period(of: .rotation) == 0)
        #expect(capabilities.gestureConfiguration(result.gestures).encode() == [0x81, 1, 0x82, 0, 0x83, 0])
    }

    @Test func namedSensorsChangeAndTheOthersKeepTheirState() throws {
        let start = BoseDesiredConfiguration(sensorPeriods: [.accelerometer: 40, .gyroscope: 40], gestures: [.headNod])
        let result = try apply(["sensors": ["gyroscope": ["enabled": false], "rotation": ["enabled": true]],
                                "gestures": ["head_nod": false, "double_tap": true]], to: start)
        #expect(result.sensorPeriods == [.accelerometer: 40, .rotation: 40])
        #expect(result.gestures == [.doubleTap])
        #expect(try apply(["sensors": ["accelerometer": ["period_ms": 0]]], to: start).sensorPeriods == [.gyroscope: 40])
    }

    @Test func theAnswerListsEverySensorAndGesture() throws {
        let result = try apply(["sensors": ["accelerometer": ["period_ms": 80]]])
        let form = result.requestForm(for: capabilities)
        #expect(form["sensors"]?["accelerometer"] == ["period_ms": 80])
        #expect(form["sensors"]?["game_rotation"] == ["period_ms": 0])
        #expect(form["sensors"]?.object?.count == 7)
        #expect(form["gestures"] == ["double_tap": false, "head_nod": false, "head_shake": false])
        // Applying the answer from nothing gives the same configuration: what a restart re-applies.
        #expect(try apply(form) == result)
    }

    @Test func aPeriodTheSensorDoesNotOfferNamesTheField() {
        expectInvalid(["sensors": ["accelerometer": ["period_ms": 30]]], field: "sensors.accelerometer.period_ms")
        expectInvalid(["sensors": ["uncalibrated_magnetometer": ["period_ms": 20]]], field: "sensors.uncalibrated_magnetometer.period_ms")
        expectInvalid(["sensors": ["accelerometer": ["period_ms": "20"]]], field: "sensors.accelerometer.period_ms")
        expectInvalid(["sensors": ["accelerometer": ["period_ms": -20]]], field: "sensors.accelerometer.period_ms")
    }

    @Test func twoDifferentPeriodsAreRefused() {
        expectInvalid(["sensors": ["accelerometer": ["period_ms": 20], "gyroscope": ["period_ms": 40]]], field: "sensors")
        expectInvalid(["sensors": ["gyroscope": ["period_ms": 20]]],
                      from: BoseDesiredConfiguration(sensorPeriods: [.accelerometer: 40]), field: "sensors")
    }

    @Test func moreThanMaxActiveSensorsIsRefused() {
        let four: DeviceValue = ["accelerometer": ["period_ms": 20], "gyroscope": ["period_ms": 20],
                                 "rotation": ["period_ms": 20], "magnetometer": ["period_ms": 20]]
        expectInvalid(["sensors": four], field: "sensors")
    }

    @Test func enabledAloneTakesTheRunningPeriodThenTheChosenOneThenTheDefault() throws {
        #expect(try apply(["sensors": ["gyroscope": ["enabled": true]]],
                          to: BoseDesiredConfiguration(sensorPeriods: [.accelerometer: 80])).sensorPeriods == [.accelerometer: 80, .gyroscope: 80])
        #expect(try apply(["sensors": ["gyroscope": ["enabled": true]]],
                          to: BoseDesiredConfiguration(chosenPeriod: 160)).sensorPeriods == [.gyroscope: 160])
        #expect(try apply(["sensors": ["accelerometer": ["enabled": true]]]).sensorPeriods == [.accelerometer: 40])
    }

    @Test func aTopLevelPeriodMovesEveryEnabledSensorAndIsKept() throws {
        let result = try apply(["period_ms": 80], to: BoseDesiredConfiguration(sensorPeriods: [.accelerometer: 20, .gyroscope: 20]))
        #expect(result.sensorPeriods == [.accelerometer: 80, .gyroscope: 80])
        #expect(result.chosenPeriod == 80 && result.sharedPeriod == 80)
        // Chosen with nothing running: the next sensor switched on takes it, and the answer keeps it for a restart.
        let chosen = try apply(["period_ms": 320])
        #expect(chosen.sensorPeriods.isEmpty && chosen.sharedPeriod == 320)
        #expect(try apply(chosen.requestForm(for: capabilities)) == chosen)
        #expect(try apply(["period_ms": 40, "sensors": ["rotation": ["enabled": true]]]).sensorPeriods == [.rotation: 40])
        #expect(BoseDesiredConfiguration.commonPeriods(capabilities) == [40, 80, 160, 320])
    }

    @Test func aTopLevelPeriodAnEnabledSensorDoesNotOfferIsRefused() {
        expectInvalid(["period_ms": 20], from: BoseDesiredConfiguration(sensorPeriods: [.uncalibratedMagnetometer: 40]), field: "period_ms")
        expectInvalid(["period_ms": 30], field: "period_ms")
        expectInvalid(["period_ms": 0], field: "period_ms")
        expectInvalid(["period_ms": "40"], field: "period_ms")
    }

    @Test func enabledWithoutAPeriodNeedsAPeriodTheSensorOffers() throws {
        expectInvalid(["sensors": ["uncalibrated_magnetometer": ["enabled": true]]],
                      from: BoseDesiredConfiguration(sensorPeriods: [.accelerometer: 20]), field: "sensors.uncalibrated_magnetometer")
        expectInvalid(["sensors": ["accelerometer": ["enabled": false, "period_ms": 20]]], field: "sensors.accelerometer")
        expectInvalid(["sensors": ["accelerometer": [:]]], field: "sensors.accelerometer")
    }

    @Test func unknownNamesAndWrongTypesAreRefused() {
        expectInvalid(["sensors": ["heart_rate": ["period_ms": 20]]], field: "sensors.heart_rate")
        expectInvalid(["sensors": ["thermometer": ["period_ms": 20]]], field: "sensors.thermometer")
        expectInvalid(["sensors": ["accelerometer": ["period_ms": 20, "range": 4]]], field: "sensors.accelerometer.range")
        expectInvalid(["sensors": ["accelerometer": 20]], field: "sensors.accelerometer")
        expectInvalid(["sensors": ["accelerometer": ["enabled": "yes"]]], field: "sensors.accelerometer.enabled")
        expectInvalid(["sensors": [20]], field: "sensors")
        expectInvalid(["gestures": ["wink": true]], field: "gestures.wink")
        expectInvalid(["gestures": ["single_tap": true]], field: "gestures.single_tap") // Frames do not detect it
        expectInvalid(["gestures": ["double_tap": 1]], field: "gestures.double_tap")
        expectInvalid(["gestures": true], field: "gestures")
        expectInvalid(["raw_stream": true], field: "raw_stream")
    }

    @Test func aRefusedRequestChangesNothing() {
        let start = BoseDesiredConfiguration(sensorPeriods: [.accelerometer: 20], gestures: [.doubleTap])
        var copy = start
        do {
            copy = try start.applying(["gestures": ["head_nod": true], "sensors": ["gyroscope": ["period_ms": 40]]], to: capabilities)
            Issue.record("accepted")
        } catch {}
        #expect(copy == start)
    }

    @Test func deviceStateFieldsDropAnOldPeriodWhenASensorIsDisabled() {
        let configuration = BoseSensorConfiguration(entries: [.init(sensorID: 0, periodMilliseconds: 20), .init(sensorID: 1, periodMilliseconds: 0),
                                                              .init(sensorID: 9, periodMilliseconds: 20)])
        #expect(configuration.stateFields == ["accelerometer": ["enabled": true, "period_ms": 20],
                                             "gyroscope": ["enabled": false, "period_ms": nil]])
        #expect(configuration.hasSameSettings(as: BoseSensorConfiguration(entries: configuration.entries.reversed())))
    }

    @Test func capabilitiesInTheState() {
        let fields = capabilities.stateFields
        #expect(fields["capabilities"]?["max_active_sensors"] == 3)
        #expect(fields["capabilities"]?["gestures"] == ["double_tap", "head_nod", "head_shake"])
        #expect(fields["capabilities"]?["sensors"]?["uncalibrated_magnetometer"] == ["periods_ms": [40, 80, 160, 320]])
        #expect(fields["capabilities"]?["sensors"]?["accelerometer"] == ["periods_ms": [20, 40, 80, 160, 320]])
        #expect(fields["sensor_service"]?["product_id"] == 0x4020)
        #expect(fields["device_status"]?["sensor_service_suspended"] == false)
    }
}
