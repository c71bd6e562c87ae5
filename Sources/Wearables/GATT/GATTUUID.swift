/// Bluetooth SIG assigned numbers for the services and characteristics wear2mqtt reads, and the conversion
/// between their 16-bit form and the 128-bit strings BlueZ puts in its D-Bus properties.
///
/// The numbers come from the Bluetooth SIG "Assigned Numbers" document (sections "GATT Services" and
/// "GATT Characteristic and Object Type").
public enum GATTUUID {
    public enum Service {
        public static let immediateAlert: UInt16 = 0x1802
        public static let currentTime: UInt16 = 0x1805
        public static let healthThermometer: UInt16 = 0x1809
        public static let deviceInformation: UInt16 = 0x180A
        public static let heartRate: UInt16 = 0x180D
        public static let battery: UInt16 = 0x180F
        public static let runningSpeedAndCadence: UInt16 = 0x1814
        public static let cyclingSpeedAndCadence: UInt16 = 0x1816
        public static let pulseOximeter: UInt16 = 0x1822
    }

    public enum Characteristic {
        public static let alertLevel: UInt16 = 0x2A06
        public static let localTimeInformation: UInt16 = 0x2A0F
        public static let batteryLevel: UInt16 = 0x2A19
        public static let temperatureMeasurement: UInt16 = 0x2A1C
        public static let systemID: UInt16 = 0x2A23
        public static let modelNumber: UInt16 = 0x2A24
        public static let serialNumber: UInt16 = 0x2A25
        public static let firmwareRevision: UInt16 = 0x2A26
        public static let hardwareRevision: UInt16 = 0x2A27
        public static let softwareRevision: UInt16 = 0x2A28
        public static let manufacturerName: UInt16 = 0x2A29
        public static let currentTime: UInt16 = 0x2A2B
        public static let heartRateMeasurement: UInt16 = 0x2A37
        public static let bodySensorLocation: UInt16 = 0x2A38
        public static let heartRateControlPoint: UInt16 = 0x2A39
        public static let pnpID: UInt16 = 0x2A50
        public static let rscMeasurement: UInt16 = 0x2A53
        public static let cscMeasurement: UInt16 = 0x2A5B
        public static let plxSpotCheckMeasurement: UInt16 = 0x2A5E
        public static let plxContinuousMeasurement: UInt16 = 0x2A5F
    }

    /// Everything after the first eight hex digits of a UUID built on the Bluetooth Base UUID
    /// (Core Specification, Vol 3 Part B §2.5.1).
    static let baseSuffix = "-0000-1000-8000-00805f9b34fb"

    /// The 128-bit form BlueZ uses, lower case: `0x180D` → `0000180d-0000-1000-8000-00805f9b34fb`.
    public static func string(for shortUUID: UInt16) -> String {
        let hex = String(shortUUID, radix: 16)
        return "0000" + String(repeating: "0", count: 4 - hex.count) + hex + baseSuffix
    }

    /// The 16-bit assigned number inside a 128-bit UUID string, or nil when the string is not a 16-bit UUID on
    /// the Bluetooth Base UUID (a vendor's own UUID, a 32-bit one, or not a UUID at all). Case-insensitive,
    /// because BlueZ writes lower case but configuration files and other stacks often do not.
    public static func shortForm(of uuid: String) -> UInt16? {
        let lowered = uuid.lowercased()
        guard lowered.utf8.count == 36, lowered.hasPrefix("0000"), lowered.hasSuffix(baseSuffix) else { return nil }
        let digits = lowered.dropFirst(4).prefix(4)
        guard digits.allSatisfy(\.isHexDigit) else { return nil }
        return UInt16(digits, radix: 16)
    }
}
