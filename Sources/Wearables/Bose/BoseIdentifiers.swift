/// The seven sensors of the Bose sensor service, by their wire id.
public enum BoseSensor: UInt8, Sendable, CaseIterable, Comparable {
    case accelerometer = 0
    case gyroscope = 1
    case rotation = 2
    case gameRotation = 3
    case orientation = 4
    case magnetometer = 5
    case uncalibratedMagnetometer = 6

    /// The contract's sensor, and so the topic `sensor/<name>`.
    public var kind: SensorKind {
        switch self {
        case .accelerometer: .accelerometer
        case .gyroscope: .gyroscope
        case .rotation: .rotation
        case .gameRotation: .gameRotation
        case .orientation: .orientation
        case .magnetometer: .magnetometer
        case .uncalibratedMagnetometer: .uncalibratedMagnetometer
        }
    }

    public init?(kind: SensorKind) {
        guard let sensor = Self.allCases.first(where: { $0.kind == kind }) else { return nil }
        self = sensor
    }

    /// The payload bytes the record layout needs; a device may announce a longer sample length (the extra
    /// bytes are skipped), never a shorter one.
    public var payloadLength: Int {
        switch self {
        case .accelerometer, .gyroscope, .orientation, .magnetometer: 7 // x, y, z i16 + accuracy u8
        case .rotation: 10 // quaternion x, y, z, w i16 + accuracy i16
        case .gameRotation: 8 // quaternion only
        case .uncalibratedMagnetometer: 12 // vector + bias vector
        }
    }

    public static func < (lhs: BoseSensor, rhs: BoseSensor) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The sample periods a sensor can run at; bit `n` of an availability mask offers the `n`-th.
public enum BoseSamplePeriod: UInt16, Sendable, CaseIterable, Comparable {
    case milliseconds320 = 320
    case milliseconds160 = 160
    case milliseconds80 = 80
    case milliseconds40 = 40
    case milliseconds20 = 20

    /// Bit 0 is 320 ms, bit 4 is 20 ms.
    public var maskBit: UInt16 { 1 << UInt16(Self.allCases.firstIndex(of: self) ?? 0) }

    public static func periods(inMask mask: UInt16) -> [BoseSamplePeriod] {
        allCases.filter { mask & $0.maskBit != 0 }.sorted()
    }

    public static func mask(of periods: some Sequence<BoseSamplePeriod>) -> UInt16 {
        periods.reduce(0) { $0 | $1.maskBit }
    }

    public static func < (lhs: BoseSamplePeriod, rhs: BoseSamplePeriod) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The gestures a Bose wearable can detect, by their wire id (0x80…); availability mask bit `id − 0x80`.
public enum BoseGesture: UInt8, Sendable, CaseIterable, Comparable {
    case singleTap = 0x80
    case doubleTap = 0x81
    case headNod = 0x82
    case headShake = 0x83

    /// The contract's name, on the `gesture` topic and in `configure`.
    public var name: String {
        switch self {
        case .singleTap: "single_tap"
        case .doubleTap: "double_tap"
        case .headNod: "head_nod"
        case .headShake: "head_shake"
        }
    }

    public init?(name: String) {
        guard let gesture = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = gesture
    }

    public var maskBit: UInt32 { 1 << UInt32(rawValue - 0x80) }

    public static func < (lhs: BoseGesture, rhs: BoseGesture) -> Bool { lhs.rawValue < rhs.rawValue }
}
