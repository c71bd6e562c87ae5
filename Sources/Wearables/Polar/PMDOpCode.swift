/// The first byte of a request written to the PMD control point, echoed as the second byte of its response.
///
/// Numbers: `polarofficial/polar-ble-sdk` Android `pmd/PmdControlPointCommand.kt`
/// (`PmdControlPointCommandClientToService`); 1–3 are also Table 4 of `technical_documentation/online_measurement.pdf`.
public enum PMDOpCode: UInt8, Sendable, Hashable, CaseIterable {
    case getMeasurementSettings = 1
    case startMeasurement = 2
    case stopMeasurement = 3
    /// The settings a measurement offers in SDK mode (the SDK's `GET_SDK_MODE_MEASUREMENT_SETTINGS`, used by
    /// `queryFullSettings`): wider ranges and rates than the default mode.
    case getFullMeasurementSettings = 4
    case getMeasurementStatus = 5
    case getSDKModeStatus = 6
    case getOfflineRecordingTriggerStatus = 7
    case setOfflineRecordingTriggerMode = 8
    case setOfflineRecordingTriggerSettings = 9
}
