import MQTT

/// A site of gateways as a gateway extension (docs/roaming.md): it takes the site's records, says which requests
/// and which devices' topics are this gateway's, narrows the device list to what this gateway holds, and lets the
/// bridge's topics to the referee.
extension SiteCoordinator: GatewayExtension {
    public var subscriptions: [String] { topics.subscriptions }

    public var gatesDeviceState: Bool { true }

    public func brokerConnected() { connected() }

    /// The site's handovers and registry act on the manager; what it hears of the site's devices feeds the reports.
    public func managerAttached(_ manager: DeviceManager) async {
        attach(manager)
        await manager.joinSite(onHeard: { [weak self] id, rssi in self?.heard(id, rssi: rssi) })
    }

    public func take(_ message: IncomingMessage) -> Bool { receive(message) }

    public func publishesState(of device: String, at now: ContinuousClock.Instant) -> Bool {
        publishesSamples(of: device, at: now)
    }

    public var publishesBridgeTopics: Bool { isReferee }

    /// This gateway's entries for the site's list, the list itself from the referee only, and Home Assistant's
    /// documents of the devices this gateway holds.
    public func narrowDeviceList(_ publication: inout DeviceListPublication) {
        if let message = heldEntriesMessage(publication.entries) { sink.publish(message) }
        let referee = isReferee
        publication.siteView = HomeAssistantPublisher.SiteView(managedAddresses: publication.entries.map(\.address), referee: referee)
        let held = heldDevices
        publication.discovered = publication.discovered.filter { held.contains($0.id) }
        publication.entries = referee ? siteDeviceList(publication.entries) : []
    }

    public func stopping() { stop() }

    /// The bridge stays up with the other gateways; this one's record goes (the will's message) and its entries.
    public func leaving() -> [OutgoingMessage] { [Self.will(gatewayID: gatewayID, layout: layout), clearedEntriesMessage] }
    public var keepsBridgeOnline: Bool { true }
}
