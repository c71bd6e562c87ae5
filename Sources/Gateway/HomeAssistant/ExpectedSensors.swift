import Wearables

/// The sensor streams a device will send, known before its first sample, so Home Assistant shows its entities as
/// soon as it connects: those its driver's description says it sends unasked (for the standard profiles, one per SIG
/// service its GATT table has). Streams seen later are added to these.
enum ExpectedSensors {
    /// `heartRateVariability`: `hrv.enabled`; a device that always streams beat intervals (`ibi`) then streams `hrv`
    /// too. A standard strap's RR intervals are optional in its measurements, so its `hrv` is known from the first one.
    static func sensors(_ description: DriverDescription, serviceUUIDs: [String], heartRateVariability: Bool = false) -> Set<String> {
        var sensors = Set(description.expectedSensors(serviceUUIDs: serviceUUIDs).map(\.rawValue))
        if heartRateVariability, sensors.contains(SensorKind.ibi.rawValue) { sensors.insert(SensorKind.hrv.rawValue) }
        return sensors
    }

    /// Events a device raises by its services (a pulse oximeter's completed spot check); the family's own come with
    /// `DiscoveredWearable`.
    static func serviceEvents(_ description: DriverDescription, serviceUUIDs: [String]) -> [String] {
        description.events(serviceUUIDs: serviceUUIDs).filter { $0.service != nil }.map(\.name)
    }
}
