/// The site's device list (`registry/<id>`, docs/roaming.md) as one gateway replicates it: the entries read from the
/// broker in its order, what each asks of this gateway's device manager, and at each report which entries this
/// gateway's own list calls for publishing. Pure: the coordinator reads and publishes the messages and calls the
/// manager, then says what the manager holds (`adopted`).
///
/// A gateway publishes the devices it manages that the registry lacks and every entry changed on it (a rename or new
/// options on the referee, a held configuration on the holder), the referee also the removals; an entry it adopted
/// or published is *settled*, so an older copy of it is never put back.
struct SiteRegistry: Sendable, Equatable {
    /// What a registry record read asks of the device manager.
    enum LocalChange: Sendable, Equatable {
        /// Manage this entry (added or changed on another gateway), then report what the manager holds (`adopted`).
        case adopt(ManagedDevice)
        /// Stop managing the device, if it is managed: the site removed it.
        case remove(id: String)
    }

    /// One retained `registry/<id>` to publish: the device's entry, or nil to delete it.
    struct Publication: Sendable, Equatable {
        var id: String
        var entry: ManagedDevice?
    }

    /// The registry as read from the broker.
    private(set) var entries: [String: ManagedDevice] = [:]
    /// Devices the registry deleted: not published back while this gateway's manager is still letting them go (they
    /// would come back to life on every gateway), until the registry lists them again.
    private(set) var deleted: Set<String> = []
    /// Each device's entry as this gateway last published it or took it from the registry: a local entry that differs
    /// was changed here and is published.
    private var settled: [String: ManagedDevice] = [:]
    /// The referee's own device list at its last report: what it removes since is deleted from the registry.
    private var refereeList: Set<String>?
    /// Counts changes to `settled` made by adoptions, so a list read before one is not taken for a local change.
    private(set) var adoptions = 0

    /// A `registry/<id>` record read from the broker (empty: the device was removed); a malformed one changes nothing.
    mutating func received(_ id: String, payload: [UInt8]) throws(SiteMessageError) -> LocalChange {
        guard !payload.isEmpty else {
            entries[id] = nil
            deleted.insert(id)
            return .remove(id: id)
        }
        let entry = try SiteMessages.registryEntry(payload, id: id)
        entries[id] = entry
        deleted.remove(id)
        return .adopt(entry)
    }

    /// The device manager took an `adopt` (or refused it): `local` is what it manages under `id` now, settled.
    mutating func adopted(_ id: String, managing local: ManagedDevice?) {
        settled[id] = local
        adoptions += 1
    }

    /// The registry entries this gateway's list `devices` calls for, settled as published: its devices the registry
    /// lacks, the entries changed here since they were last settled, and `asReferee` the removals of devices it listed
    /// at its last report. `readAtAdoptions`: `adoptions` when `devices` was read; if an adoption came since, the list
    /// may predate it and only missing devices are published this time.
    mutating func publications(for devices: [ManagedDevice], readAtAdoptions: Int, asReferee: Bool) -> [Publication] {
        var publications: [Publication] = []
        let current = readAtAdoptions == adoptions
        for device in devices where !device.needsDriverDetection && !deleted.contains(device.id) {
            let known = entries[device.id]
            let changedHere = current && settled[device.id].map { $0 != device } ?? false
            if known == nil || (known != device && changedHere) {
                publications.append(Publication(id: device.id, entry: device))
                settled[device.id] = device
            }
        }
        let ids = Set(devices.map(\.id))
        if asReferee, let previous = refereeList {
            for id in previous.subtracting(ids).sorted() where entries[id] != nil {
                publications.append(Publication(id: id, entry: nil))
            }
        }
        refereeList = asReferee ? ids : nil
        return publications
    }
}
