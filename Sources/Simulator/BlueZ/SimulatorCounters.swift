import Synchronization

/// Process-wide counts a host of the simulator (the bench) reads to tell where data went.
public enum SimulatorCounters {
    /// Notifications dropped because the client's AcquireNotify socket was full, as bluetoothd drops them: the
    /// client did not read within the kernel's queue (`net.unix.max_dgram_qlen` datagrams, 10 by default).
    public static let notificationsDroppedOnFullSockets = Atomic<UInt64>(0)
}

/// What one simulator's adapter was asked to do, for tests of a radio watchdog ("it power-cycled the adapter once"):
/// the adapter's `Inspect` (an empty address) reads them. Per simulator, unlike `SimulatorCounters`.
struct AdapterCounts: Sendable, Equatable {
    /// Powered switched off, and on, by Set, the control interface or the timeline (a restored adapter powering
    /// itself on is not counted).
    var powerOffs = 0
    var powerOns = 0
    /// StartDiscovery calls answered with success (one new session each).
    var discoveryStarts = 0
    /// Advertisements sent on the air while the scanner was deaf, which it did not report: what a test of
    /// "nothing arrives" waits for, instead of a length of time.
    var unheardAdvertisements = 0

    var summary: [String: String] {
        ["power_offs": String(powerOffs), "power_ons": String(powerOns), "discovery_starts": String(discoveryStarts),
         "unheard_advertisements": String(unheardAdvertisements)]
    }
}
