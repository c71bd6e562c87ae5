/// What this gateway heard of the site's devices since its last report: the readings BlueZ gave, averaged per
/// device, and the last level of each so a connected device that stopped advertising still has one
/// (docs/roaming.md, "Topics").
public struct SightingCollector: Sendable {
    private var sums: [String: (total: Double, count: Int)] = [:]
    private var lastLevel: [String: Double] = [:]

    public init() {}

    public mutating func heard(_ device: String, rssi: Int) {
        sums[device, default: (0, 0)].total += Double(rssi)
        sums[device, default: (0, 0)].count += 1
        lastLevel[device] = Double(rssi)
    }

    /// The report of the interval that ends now, and a new interval. `connected`: devices this gateway holds a
    /// link to; `lost`: devices whose link dropped during the interval. A device neither heard nor connected nor
    /// lost is left out (the report lists what this gateway has, nothing else).
    public mutating func report(gateway: String, connected: Set<String>, lost: Set<String>) -> SightingReport {
        var devices: [String: SightingReport.Sighting] = [:]
        for device in Set(sums.keys).union(connected).union(lost) {
            let sum = sums[device]
            let rssi = sum.map { $0.total / Double($0.count) } ?? lastLevel[device] ?? -100
            devices[device] = SightingReport.Sighting(rssi: rssi, heard: sum?.count ?? 0,
                                                      connected: connected.contains(device), lost: lost.contains(device))
        }
        sums = [:]
        return SightingReport(gateway: gateway, devices: devices)
    }

    /// The device left the registry.
    public mutating func forget(_ device: String) {
        sums[device] = nil
        lastLevel[device] = nil
    }
}
