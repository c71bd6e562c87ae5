import Wearables

extension FuzzTarget {
    /// Bose Wearable's characteristics: SensorInformation, SensorConfiguration, GestureInformation,
    /// GestureConfiguration, SensorData, gesture events, DeviceInformation.
    static let bose = FuzzTarget(
        name: "bose",
        summary: "Bose Wearable: sensor and gesture information and configuration, sensor data, gestures, device info"
    ) { bytes in
        if let value = try? BoseSensorInformation.decode(bytes), value.ignored.isEmpty {
            expectStable(value, { $0.encode() }, { try BoseSensorInformation.decode($0) }, "BoseSensorInformation")
        }
        checkRoundTrip(bytes, BoseSensorConfiguration.decode, { $0.encode() }, "BoseSensorConfiguration")
        checkRoundTrip(bytes, BoseGestureInformation.decode, { $0.encode() }, "BoseGestureInformation")
        checkRoundTrip(bytes, BoseDeviceInformation.decode, { $0.encode() }, "BoseDeviceInformation")
        if let events = try? BoseGestureEvent.decode(bytes) {
            expectStable(events, { $0.flatMap { $0.encode() } }, { try BoseGestureEvent.decode($0) }, "BoseGestureEvent")
        }
        checkSensorData(bytes, information: boseSDKSensors)

        // The description the device gave, then data framed by it, both from the input.
        let sensors = InputSplit(bytes, unit: BoseSensorInformation.entryLength, maximumUnits: 6)
        if let information = try? BoseSensorInformation.decode(sensors.head) {
            checkSensorData(sensors.tail, information: information)
        }
        let gestures = InputSplit(bytes, unit: 2, maximumUnits: 8)
        if let information = try? BoseGestureInformation.decode(gestures.head),
           let configuration = try? BoseGestureConfiguration.decode(gestures.tail, information: information) {
            precondition(configuration.encode() == gestures.tail, "BoseGestureConfiguration re-encodes differently")
        }
    }

    /// Accelerometer, gyroscope and rotation entries as the SDK's `SensorInformation` lists them
    /// (Tests/WearablesTests/BoseCodecTests.swift, `accelerometerEntry` … `rotationEntry`), plus an unknown id 9.
    static let boseSDKSensors: BoseSensorInformation = {
        let bytes: [UInt8] = [
            0x00, 0xFF, 0xF0, 0x00, 0x10, 0x80, 0x00, 0x7F, 0xFF, 0x00, 0x1F, 0x07,
            0x01, 0xF8, 0x30, 0x07, 0xD0, 0x80, 0x01, 0x7F, 0xFF, 0x00, 0x18, 0x07,
            0x02, 0xFF, 0xFF, 0x00, 0x01, 0xC0, 0x00, 0x40, 0x00, 0x00, 0x01, 0x0C,
            0x09, 0x00, 0x00, 0x00, 0x64, 0x00, 0x00, 0x00, 0xFF, 0x00, 0x10, 0x04,
        ]
        guard let information = try? BoseSensorInformation.decode(bytes) else {
            preconditionFailure("the SDK's sensor information does not decode")
        }
        return information
    }()
}

/// The records before the first unframeable one re-encode to the bytes they came from when every sample
/// length is its layout's; either way the strict decode agrees with the tolerant one.
private func checkSensorData(_ bytes: [UInt8], information: BoseSensorInformation) {
    let decoded = BoseSensorData.decodeRecords(bytes, information: information)
    do {
        let strict = try BoseSensorData.decode(bytes, information: information)
        precondition(decoded.problem == nil && strict == decoded.records, "strict and tolerant SensorData disagree")
    } catch {
        precondition(decoded.problem == error, "strict SensorData threw \(error), tolerant stopped at \(String(describing: decoded.problem))")
    }
    let again = BoseSensorData.decodeRecords(BoseSensorData.encode(decoded.records, information: information),
                                             information: information)
    precondition(again.problem == nil && again.records == decoded.records, "SensorData records do not survive encode → decode")
}
