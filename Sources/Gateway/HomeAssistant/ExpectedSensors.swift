/// The sensor streams a device will send, known before its first sample, so Home Assistant shows its entities as
/// soon as it connects: for the `standard` driver from the SIG services its GATT table has (it streams each one it
/// finds), for the E4 from its driver (which always streams them). Streams seen later are added to these.
enum ExpectedSensors {
    /// SIG services (16-bit, as in their 128-bit UUID) and the sensor stream each one feeds.
    static let byService: [String: String] = [
        "0000180d": "heart_rate", "00001822": "spo2", "00001809": "temperature", "00001814": "running", "00001816": "cycling",
    ]

    /// Streams a driver always sends once connected.
    static let byDriver: [String: Set<String>] = ["empatica": ["heart_rate", "eda", "skin_temperature", "ibi"], "polar": ["heart_rate"],
                                                  "infinitime": ["heart_rate", "steps"]]

    /// `heartRateVariability`: `hrv.enabled`; a driver that always streams beat intervals (`ibi`) then streams
    /// `hrv` too. A standard strap's RR intervals are optional in its measurements, so its `hrv` is known from the
    /// first one.
    static func sensors(driver: String, serviceUUIDs: [String], heartRateVariability: Bool = false) -> Set<String> {
        var sensors = byDriver[driver] ?? []
        if heartRateVariability, sensors.contains("ibi") { sensors.insert("hrv") }
        guard driver == "standard" else { return sensors }
        for uuid in serviceUUIDs {
            if let sensor = byService[String(uuid.lowercased().prefix(8))] { sensors.insert(sensor) }
        }
        return sensors
    }

    /// Events a standard device raises by its services: a pulse oximeter's completed spot check.
    static func events(driver: String, serviceUUIDs: [String]) -> [String] {
        guard driver == "standard" else { return [] }
        return serviceUUIDs.contains { $0.lowercased().hasPrefix("00001822") } ? ["spot_check"] : []
    }
}
