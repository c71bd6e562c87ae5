import Synchronization

/// What a driver keeps across gateway restarts for one device: credentials a pairing produced, the position of
/// a history download. Entries are small JSON-shaped values under a name (`credentials`, `sync`).
///
/// The gateway stores each device's entries as files in its state directory, readable by the gateway's user
/// only, because credentials are among them; `inMemory()` serves tests and devices added without a state
/// directory. The storage does not interpret the values and keeps no history of them.
public struct DriverStorage: Sendable {
    private let loadEntry: @Sendable (String) -> [String: DeviceValue]?
    private let saveEntry: @Sendable (String, [String: DeviceValue]?) throws -> Void

    /// `save` receives nil to delete an entry.
    public init(load: @escaping @Sendable (String) -> [String: DeviceValue]?,
                save: @escaping @Sendable (String, [String: DeviceValue]?) throws -> Void) {
        loadEntry = load
        saveEntry = save
    }

    /// Keeps entries in memory only, for as long as the value lives.
    public static func inMemory() -> DriverStorage {
        let entries = Mutex<[String: [String: DeviceValue]]>([:])
        return DriverStorage(load: { name in entries.withLock { $0[name] } },
                             save: { name, value in entries.withLock { $0[name] = value } })
    }

    public func load(_ name: String) -> [String: DeviceValue]? { loadEntry(name) }

    /// Stores or replaces the entry; a failure is `INTERNAL` (a full or read-only disk), since the operation that
    /// produced the value cannot be trusted to survive a restart.
    public func save(_ name: String, _ value: [String: DeviceValue]) throws(CommandError) {
        do { try saveEntry(name, value) } catch {
            throw CommandError(.internalError, "cannot store \(name) for this device: \(error)")
        }
    }

    public func remove(_ name: String) throws(CommandError) {
        do { try saveEntry(name, nil) } catch {
            throw CommandError(.internalError, "cannot remove \(name) for this device: \(error)")
        }
    }
}
