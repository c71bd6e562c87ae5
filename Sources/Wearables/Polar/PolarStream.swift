/// The PMD measurements the `polar` driver streams, under the names the MQTT contract gives them: each is the
/// `sensor/<name>` topic its samples go to and the key of `request/configure`'s `sensors` object.
///
/// Skin temperature, location, pressure and temperature are left out: no sensor the driver targets (H10, H9,
/// Verity Sense, OH1) streams them (docs/protocols/polar.md, "Not supported").
public enum PolarStream: String, Sendable, CaseIterable, Comparable {
    case ecg
    case ppg
    case accelerometer
    case ppi
    case gyroscope
    case magnetometer

    public var measurementType: PMDMeasurementType {
        switch self {
        case .ecg: .ecg
        case .ppg: .ppg
        case .accelerometer: .acc
        case .ppi: .ppi
        case .gyroscope: .gyroscope
        case .magnetometer: .magnetometer
        }
    }

    public init?(_ type: PMDMeasurementType) {
        guard let stream = Self.allCases.first(where: { $0.measurementType == type }) else { return nil }
        self = stream
    }

    public static func < (lhs: PolarStream, rhs: PolarStream) -> Bool {
        lhs.measurementType.rawValue < rhs.measurementType.rawValue
    }

    /// The request and state keys of the settings a stream may have, and the unit words of error messages.
    public static let settingKeys: [(key: String, type: PMDSettingType, unit: String)] = [
        ("rate_hz", .sampleRate, " Hz"), ("resolution", .resolution, " bits"), ("range", .range, ""),
        ("channels", .channels, ""),
    ]
}
