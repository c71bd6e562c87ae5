/// Which measurements run, from the parameters of a "get measurement status" response: one byte per type, the
/// low six bits the type, the top two whether it runs online (bit 6) and/or offline (bit 7).
///
/// Source: `polarofficial/polar-ble-sdk` Android `pmd/PmdActiveMeasurement.kt` (`fromStatusResponse`, mask 0xC0)
/// and `BlePMDClient.readMeasurementStatus`, which skips bytes naming no data type; so does this decoder.
public struct PMDMeasurementStatus: Sendable, Hashable {
    public struct Activity: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let online = Activity(rawValue: 1)
        public static let offline = Activity(rawValue: 2)
    }

    public var activities: [PMDMeasurementType: Activity]

    public init(activities: [PMDMeasurementType: Activity]) { self.activities = activities }

    public static func decode(parameters: [UInt8]) -> PMDMeasurementStatus {
        var activities: [PMDMeasurementType: Activity] = [:]
        for byte in parameters {
            guard let type = PMDMeasurementType(typeByte: byte), type.sendsData else { continue }
            activities[type] = Activity(rawValue: byte >> 6)
        }
        return PMDMeasurementStatus(activities: activities)
    }

    /// One byte per type in type order.
    public func encode() -> [UInt8] {
        activities.sorted { $0.key.rawValue < $1.key.rawValue }.map { ($0.value.rawValue & 0x03) << 6 | $0.key.rawValue }
    }
}
