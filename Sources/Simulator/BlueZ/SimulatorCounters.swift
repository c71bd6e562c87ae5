import Synchronization

/// Process-wide counts a host of the simulator (the bench) reads to tell where data went.
public enum SimulatorCounters {
    /// Notifications dropped because the client's AcquireNotify socket was full, as bluetoothd drops them: the
    /// client did not read within the kernel's queue (`net.unix.max_dgram_qlen` datagrams, 10 by default).
    public static let notificationsDroppedOnFullSockets = Atomic<UInt64>(0)
}
