import Synchronization

/// This gateway's part in a site of gateways (docs/roaming.md): what it hears, who owns what, and its side of each
/// handover, around the pure machines `SightingCollector`, `SiteOwnership` and `DeviceHandover`.
///
/// Being built (issue 26): so far it collects what the device manager hears; the site topics, the referee's timer
/// and the handovers are wired next.
public final class SiteCoordinator: Sendable {
    public let gatewayID: String
    public let settings: RoamingSettings
    private let sightings = Mutex(SightingCollector())

    public init(gatewayID: String, settings: RoamingSettings) {
        self.gatewayID = gatewayID
        self.settings = settings
    }

    /// A reading of a managed device's RSSI (the device manager's `onHeard`).
    public func heard(_ device: String, rssi: Int) {
        sightings.withLock { $0.heard(device, rssi: rssi) }
    }

    /// The report of the interval that ends now.
    public func report(connected: Set<String>, lost: Set<String>) -> SightingReport {
        sightings.withLock { $0.report(gateway: gatewayID, connected: connected, lost: lost) }
    }
}
