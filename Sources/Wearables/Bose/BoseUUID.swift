/// The Bose Wearable sensor service and its characteristics, in the lower-case 128-bit form BlueZ uses.
///
/// Source: Bose's own SDK (`WearableSensorService.swift`, vendored in `umarqattan/Vudu`), cross-checked by
/// `zakaton/Bose-Frames-Web-SDK`; see docs/protocols/bose.md.
public enum BoseUUID {
    /// 0xFDD2, a 16-bit UUID assigned to Bose by the Bluetooth SIG; devices advertise it.
    public static let service = GATTUUID.string(for: 0xFDD2)
    /// Read, notify: `WearableDeviceInformation`.
    public static let deviceInformation = "7b61ad83-041c-4333-a0ab-efb2ab7bdd43"
    /// Read: `SensorInformation`.
    public static let sensorInformation = "855cb3e7-98ff-42a6-80fc-40b32a2221c1"
    /// Read, write with response, notify: `SensorConfiguration`.
    public static let sensorConfiguration = "5af38af6-000e-404b-9b46-07f77580890b"
    /// Notify: `SensorData`.
    public static let sensorData = "56a72ab8-4988-4cc8-a752-fbd1d54a953d"
    /// Read: `GestureInformation`.
    public static let gestureInformation = "a0384f52-f95a-4bcd-b898-7b9ceec92dad"
    /// Read, write with response, notify: `GestureConfiguration`.
    public static let gestureConfiguration = "21e550af-f780-477b-9334-1f983296f1d7"
    /// Notify: `GestureData`.
    public static let gestureData = "9014dd4e-79ba-4802-a275-894d3b85ac74"
}
