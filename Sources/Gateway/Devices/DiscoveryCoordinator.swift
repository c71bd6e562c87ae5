import BlueZ
import DBus
import Logging

/// Shares BlueZ discovery between everyone who needs it (a `scan` request, sessions waiting for a device
/// BlueZ has not seen yet): discovery runs while at least one lease is held and stops when the last one is
/// released, so one user cannot stop another's.
public actor DiscoveryCoordinator {
    public struct Lease: Sendable, Hashable {
        let id: UInt64
        let adapter: ObjectPath
    }

    private let bluez: any BluetoothCentral
    private let logger: Logger
    private var leases: [ObjectPath: Set<UInt64>] = [:]
    private var nextID: UInt64 = 1
    private var filter = DiscoveryFilter()

    public init(bluez: any BluetoothCentral, logger: Logger) {
        self.bluez = bluez
        self.logger = logger
    }

    public func acquire(adapter: ObjectPath, filter: DiscoveryFilter = DiscoveryFilter()) async -> Lease {
        let lease = Lease(id: nextID, adapter: adapter)
        nextID += 1
        let first = leases[adapter, default: []].isEmpty
        leases[adapter, default: []].insert(lease.id)
        if first || filter != self.filter {
            // Several users want different filters: the widest (none) serves them all.
            self.filter = first ? filter : DiscoveryFilter()
            do {
                try await bluez.startDiscovery(adapter: adapter, filter: self.filter)
            } catch {
                logger.warning("cannot start discovery", metadata: ["adapter": "\(adapter)", "error": "\(error)"])
            }
        }
        return lease
    }

    /// Whether anyone holds discovery on `adapter`.
    public func isHeld(_ adapter: ObjectPath) -> Bool { !(leases[adapter]?.isEmpty ?? true) }

    /// Stops and starts discovery again with the current filter, when anyone holds it: the radio watchdog's first
    /// step, and how discovery resumes on an adapter that came back or was power-cycled (power-off ends it).
    public func restart(adapter: ObjectPath) async {
        guard isHeld(adapter) else { return }
        try? await bluez.stopDiscovery(adapter: adapter)
        do {
            try await bluez.startDiscovery(adapter: adapter, filter: filter)
        } catch {
            logger.warning("cannot restart discovery", metadata: ["adapter": "\(adapter)", "error": "\(error)"])
        }
    }

    public func release(_ lease: Lease) async {
        leases[lease.adapter]?.remove(lease.id)
        guard leases[lease.adapter]?.isEmpty ?? true else { return }
        leases[lease.adapter] = nil
        do {
            try await bluez.stopDiscovery(adapter: lease.adapter)
        } catch {
            logger.debug("stopping discovery failed", metadata: ["error": "\(error)"])
        }
    }
}
