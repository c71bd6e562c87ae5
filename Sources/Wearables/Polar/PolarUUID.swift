/// The GATT services and characteristics of Polar sensors (H10, H9, Verity Sense, OH1), as the 128-bit
/// lower-case strings BlueZ uses.
///
/// Source: `polarofficial/polar-ble-sdk`, Android `BlePMDClient.kt` (companion: `PMD_SERVICE`, `PMD_CP`,
/// `PMD_DATA`) and `psftp/BlePsFtpUtils.kt` (`RFC77_PFTP_*`); the same three PMD UUIDs are in Table 3 of the
/// SDK's `technical_documentation/online_measurement.pdf`. Heart rate, battery and device information are the
/// SIG services (`GATTUUID`), which every Polar sensor also has.
public enum PolarUUID {
    public enum Service {
        /// Polar Measurement Data: the control point and the data stream of ECG, PPG, ACC, PPI, gyroscope,
        /// magnetometer. A device that has it speaks every codec in this folder.
        public static let measurementData = "fb005c80-02e7-f387-1cad-8acd2d8df0c8"
        /// Polar's file transfer service (PSFTP, "RFC77"; a 16-bit number Polar Electro registered with the SIG).
        /// H10 recordings, the device clock and SDK-mode features live behind it as protocol-buffer messages;
        /// the H10 recording codecs are `PSFTPFrame` … `H10RecordingRequest` (docs/protocols/polar.md, "File transfer").
        public static let fileTransfer = "0000feee-0000-1000-8000-00805f9b34fb"
    }

    public enum Characteristic {
        /// Read: the feature bitmap (`PMDFeatures`). Write with response: a `PMDControlPointRequest`.
        /// Notify / indicate: `PMDControlPointResponse`s and the "measurement stopped" notice (`PMDControlPointNotice`).
        public static let measurementControlPoint = "fb005c81-02e7-f387-1cad-8acd2d8df0c8"
        /// Notify: `PMDDataFrame`s of every running measurement, one frame per notification.
        public static let measurementData = "fb005c82-02e7-f387-1cad-8acd2d8df0c8"
        /// PSFTP's MTU characteristic (requests and responses in frames), device to host and host to device.
        public static let fileTransferMTU = "fb005c51-02e7-f387-1cad-8acd2d8df0c8"
        public static let fileTransferDeviceToHost = "fb005c52-02e7-f387-1cad-8acd2d8df0c8"
        public static let fileTransferHostToDevice = "fb005c53-02e7-f387-1cad-8acd2d8df0c8"
    }

    /// Polar sensors advertise as "Polar <model> <device id>", e.g. "Polar H10 20346EAB": the SDK accepts a name
    /// that starts with "Polar" and has at least three words (`PolarAdvDataUtility.isValidDevice`).
    public static let advertisedNamePrefix = "Polar"

    /// The model word of an advertised name ("H10" of "Polar H10 20346EAB"), or nil for a name that is not a
    /// Polar sensor's (the SDK's `getDeviceModelNameFromAdvLocalName`: everything between the prefix and the
    /// last word).
    public static func model(fromAdvertisedName name: String) -> String? {
        let words = name.split(separator: " ", omittingEmptySubsequences: true)
        guard words.count > 2, words[0] == advertisedNamePrefix else { return nil }
        return words[1..<(words.count - 1)].joined(separator: " ")
    }
}
