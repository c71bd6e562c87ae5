import DBus

/// The radio faults of `RadioFaults` carried out on the bus: a scanner gone deaf, a discovery stuck InProgress, and
/// the adapter removed and back (`index_removed` and `index_added` in bluetoothd's `src/adapter.c`).
extension SimulatedBluetoothDaemon {
    /// Applies `change` to the radio's faults, answering a refusal with the control interface's error.
    private func changeRadio(_ change: (inout RadioFaults) throws(RadioFaults.Refusal) -> Void) throws(BlueZErrorReply) {
        do {
            try change(&radioFaults)
        } catch {
            switch error {
            case .adapterRemoved: throw ControlError.adapterRemoved
            case .adapterPresent: throw ControlError.adapterPresent
            }
        }
    }

    /// From now on the scan hears nothing (`scanOnce`); Discovering stays as it is.
    func deafenScanner(clearedBy cure: DeafScannerCure) throws(BlueZErrorReply) {
        try changeRadio { faults throws(RadioFaults.Refusal) in try faults.deafenScanner(clearedBy: cure) }
    }

    /// From now on StartDiscovery is refused (`startDiscovery`). A scan under way stops with the controller's, as
    /// at power-off: every session ends, RSSI is invalidated and Discovering goes false; nothing restarts it.
    func stickDiscovery() throws(BlueZErrorReply) {
        try changeRadio { faults throws(RadioFaults.Refusal) in try faults.stickDiscovery() }
        if discovery.isDiscovering {
            discovery.removeAllSessions()
            stopScanning()
        }
    }

    /// The controller's index goes away. Links drop as at power-off (Connected false, pending Connects fail), then
    /// bluetoothd's `adapter_remove`: discovery sessions and filters freed without a signal, each device's objects
    /// removed (GATT, Battery1, Device1; what it stored of a paired one kept), and the adapter object last. Calls to
    /// those paths then fail as for any unknown object.
    func removeAdapter() async throws(BlueZErrorReply) {
        try changeRadio { faults throws(RadioFaults.Refusal) in try faults.removeAdapter() }
        logger.info("\(adapterPath) removed: the controller's index went away")
        // First, so that calls running meanwhile (linkDown suspends) find no controller: NotReady.
        powered = false
        discoverable = false
        scanTask?.cancel()
        scanTask = nil
        discovery = DiscoverySessions()
        for device in devices.values.sorted(by: { $0.address < $1.address }) {
            await linkDown(device, cause: .powerOff)
        }
        // Restored while the links went down: the adapter is back with its stored devices, as after a quick replug.
        guard radioFaults.adapterRemoved else { return }
        for device in devices.values.sorted(by: { $0.address < $1.address }) where device.isExported {
            if device.paired { unexportDevice(device) } else { forgetDevice(device) }
        }
        objects.unexport(adapterPath)
    }

    /// The controller is back: bluetoothd registers its adapter powered off and not discovering (InterfacesAdded),
    /// loads the devices it stored (the paired ones), then powers it on (main.conf `AutoEnable`, PropertiesChanged).
    func restoreAdapter() throws(BlueZErrorReply) {
        try changeRadio { faults throws(RadioFaults.Refusal) in try faults.restoreAdapter() }
        logger.info("\(adapterPath) is back")
        objects.export(adapterPath, interfaces: [(BlueZInterfaces.adapterDefinition(self), adapterProperties())])
        exportStoredDevices()
        powered = true
        setAdapterProperty("Powered", true)
    }

    /// The adapter's `Inspect`: its faults and what it was asked to do.
    func inspectAdapter() -> [String: String] {
        radioFaults.summary.merging(adapterCounts.summary) { first, _ in first }
    }
}
