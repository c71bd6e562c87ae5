/// How a deaf scanner (`SimulatorAction.deafenScanner`) gets its hearing back.
public enum DeafScannerCure: String, Sendable, CaseIterable {
    /// Stopping the scanner completely: the last discovery session ends (StopDiscovery, its client leaving the bus)
    /// or the adapter is powered off. Starting discovery again then hears advertisements.
    case restart
    /// Only powering the adapter off (and on again): a restart of discovery leaves it deaf.
    case power
}

/// What is wrong with the adapter's radio: the three ways a BlueZ adapter stops working without saying so that the
/// gateway's radio watchdog must notice and cure (docs/simulator.md, "Radio faults"). Pure: the daemon tells it what
/// happened to the adapter and asks it what the radio does.
///
/// Does not fault connections or GATT: a deaf scanner or a stuck discovery leaves links and Connect as they are.
struct RadioFaults: Sendable, Equatable {
    enum Refusal: Error, Equatable {
        /// The fault needs the adapter, and it is removed.
        case adapterRemoved
        /// `restoreAdapter` while the adapter is there.
        case adapterPresent
    }

    /// Advertisements no longer reach the host (nil: they do), and what clears that.
    private(set) var deafScanner: DeafScannerCure?
    /// Every StartDiscovery is refused with InProgress: the controller will not start a scan.
    private(set) var discoveryStuck = false
    /// The controller's index is gone: no adapter object, nothing on the radio.
    private(set) var adapterRemoved = false

    var hearsAdvertisements: Bool { deafScanner == nil }

    mutating func deafenScanner(clearedBy cure: DeafScannerCure) throws(Refusal) {
        guard !adapterRemoved else { throw .adapterRemoved }
        deafScanner = cure
    }

    mutating func stickDiscovery() throws(Refusal) {
        guard !adapterRemoved else { throw .adapterRemoved }
        discoveryStuck = true
    }

    /// The scanner stopped completely (the last session ended): a deafness cured by a restart is over.
    mutating func scannerStopped() {
        if deafScanner == .restart { deafScanner = nil }
    }

    /// The controller was powered off, which resets it: every fault of the radio is over when it comes back on.
    mutating func poweredOff() {
        deafScanner = nil
        discoveryStuck = false
    }

    /// The controller went away; the one that comes back is initialised afresh, so its faults go with it.
    mutating func removeAdapter() throws(Refusal) {
        guard !adapterRemoved else { throw .adapterRemoved }
        poweredOff()
        adapterRemoved = true
    }

    mutating func restoreAdapter() throws(Refusal) {
        guard adapterRemoved else { throw .adapterPresent }
        adapterRemoved = false
    }

    /// For the adapter's `Inspect`.
    var summary: [String: String] {
        [
            "adapter": adapterRemoved ? "removed" : "present",
            "scanner_deaf": deafScanner?.rawValue ?? "no",
            "discovery_stuck": discoveryStuck ? "yes" : "no",
        ]
    }
}
