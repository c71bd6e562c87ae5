/// The Empatica E4's GATT services and characteristics, as the 128-bit lower-case strings BlueZ uses.
///
/// Empatica never published these; they are reverse-engineered. Every one is a 16-bit number on the Bluetooth
/// Base UUID, so `GATTUUID.string(for:)` and `GATTUUID.shortForm(of:)` work on them too. Sources:
/// `mountainaught/e4-python-server` `main.py` (the four sensor characteristics and the command characteristic)
/// and `ismaelwarnants/Gadgetbridge-EmpaticaE4` `EmpaticaE4Constants.java` (all three services, control and
/// battery). The sources agree wherever they overlap.
public enum E4UUID {
    /// The 16-bit forms, for `GATTCharacteristicValue.characteristicUUID` and for matching BlueZ objects.
    public enum Short {
        public static let sensorsService: UInt16 = 0x3EA0
        public static let bvp: UInt16 = 0x3EA1
        public static let accelerometer: UInt16 = 0x3EA3
        public static let temperature: UInt16 = 0x3EA6
        public static let eda: UInt16 = 0x3EA8
        public static let statusService: UInt16 = 0x3EB0
        public static let control: UInt16 = 0x3EB2
        public static let battery: UInt16 = 0x3EB3
        public static let commandService: UInt16 = 0x3E70
        public static let command: UInt16 = 0x3E71
    }

    public enum Service {
        /// Holds the four sensor streams; nothing is notified until the start command is written.
        public static let sensors = "00003ea0-0000-1000-8000-00805f9b34fb"
        public static let status = "00003eb0-0000-1000-8000-00805f9b34fb"
        public static let command = "00003e70-0000-1000-8000-00805f9b34fb"
    }

    public enum Characteristic {
        /// Blood volume pulse, 7-bit packed deltas (`E4BVPPacket`).
        public static let bvp = "00003ea1-0000-1000-8000-00805f9b34fb"
        /// Acceleration, signed bytes (`E4AccelerometerPacket`).
        public static let accelerometer = "00003ea3-0000-1000-8000-00805f9b34fb"
        /// Skin temperature (`E4TemperaturePacket`).
        public static let temperature = "00003ea6-0000-1000-8000-00805f9b34fb"
        /// Electrodermal activity, also called GSR (`E4EDAPacket`).
        public static let eda = "00003ea8-0000-1000-8000-00805f9b34fb"
        /// Notified by Gadgetbridge's driver, but no source decodes it; its layout is unknown.
        public static let control = "00003eb2-0000-1000-8000-00805f9b34fb"
        /// Battery level (`E4BatteryLevel`).
        public static let battery = "00003eb3-0000-1000-8000-00805f9b34fb"
        /// Takes the start command (`E4StartCommand`).
        public static let command = "00003e71-0000-1000-8000-00805f9b34fb"
    }
}
