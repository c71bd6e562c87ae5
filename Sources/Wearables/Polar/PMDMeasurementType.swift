/// What a PMD control point request, response or data frame is about: the low six bits of its type byte.
///
/// Numbers: `polarofficial/polar-ble-sdk` Android `pmd/PmdMeasurementType.kt` (Table 2 of
/// `technical_documentation/online_measurement.pdf` lists the first ten). `sdkMode` and `offlineRecording` are
/// modes, not streams: they are started and stopped like a measurement but send no data frames.
public enum PMDMeasurementType: UInt8, Sendable, CaseIterable, Hashable {
    case ecg = 0
    case ppg = 1
    case acc = 2
    case ppi = 3
    case gyroscope = 5
    case magnetometer = 6
    case skinTemperature = 7
    case sdkMode = 9
    case location = 10
    case pressure = 11
    case temperature = 12
    case offlineRecording = 13
    case offlineHeartRate = 14

    /// The bits of a type byte that name the measurement; the top bit of a request's type byte is the
    /// recording type (`PMDRecordingType`).
    public static let typeMask: UInt8 = 0x3F

    /// The type a byte names, or nil for a number the SDK does not list (the SDK's `UNKNOWN_TYPE`).
    public init?(typeByte: UInt8) {
        self.init(rawValue: typeByte & Self.typeMask)
    }

    /// True for the types that stream data frames (the SDK's `isDataType`).
    public var sendsData: Bool {
        switch self {
        case .sdkMode, .offlineRecording: false
        default: true
        }
    }
}

/// Whether a measurement streams to the connected host (online) or records into the device's memory (offline):
/// the top bit of the type byte of a settings or start request (`PmdRecordingType.kt`, `asBitField`).
public enum PMDRecordingType: UInt8, Sendable, Hashable {
    case online = 0
    case offline = 1

    var bitField: UInt8 { rawValue << 7 }

    init(typeByte: UInt8) { self = typeByte & 0x80 == 0 ? .online : .offline }
}
