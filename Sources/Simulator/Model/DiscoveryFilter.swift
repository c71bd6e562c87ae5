import DBus
import Wearables
import SimulatedWearables

/// One client's `SetDiscoveryFilter` settings and the rule BlueZ applies to decide whether an advertisement
/// is reported to it (`parse_discovery_filter_entry` and `is_filter_match` in `src/adapter.c`).
///
/// Does not model BR/EDR inquiry (every simulated device is LE only, so a `bredr` filter finds nothing) or the
/// `AutoConnect` key, which BlueZ 5.66 does not have.
struct DiscoveryFilter: Equatable, Sendable {
    enum Transport: String, Sendable { case auto, bredr, le }

    var uuids: [BluetoothUUID] = []
    var rssi: Int?
    var pathloss: Int?
    var transport: Transport = .auto
    var duplicateData = false
    var discoverable = false
    var pattern: String?

    /// The keys `GetDiscoveryFilters` lists in 5.66.
    static let supportedKeys = ["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"]

    /// Parses the `a{sv}` argument; nil for an empty dictionary, which removes the client's filter. Throws for
    /// an unknown key, a value of the wrong type or range, or RSSI and Pathloss together, as BlueZ does (all
    /// answered with `org.bluez.Error.InvalidArguments`).
    static func parse(_ entries: [String: DBusValue]) throws(DiscoveryFilterError) -> DiscoveryFilter? {
        guard !entries.isEmpty else { return nil }
        var filter = DiscoveryFilter()
        for (key, value) in entries.sorted(by: { $0.key < $1.key }) {
            switch (key, value) {
            case ("UUIDs", .array("s", let items)):
                filter.uuids = []
                for item in items {
                    guard let text = item.stringValue, let uuid = BluetoothUUID(string: text) else {
                        throw .invalid(key, "\(item) is not a UUID")
                    }
                    filter.uuids.append(uuid)
                }
            case ("RSSI", .int16(let rssi)):
                guard (-127...20).contains(rssi) else { throw .invalid(key, "\(rssi) is outside -127…20") }
                filter.rssi = Int(rssi)
            case ("Pathloss", .uint16(let pathloss)):
                guard pathloss <= 137 else { throw .invalid(key, "\(pathloss) is above 137") }
                filter.pathloss = Int(pathloss)
            case ("Transport", .string(let text)):
                guard let transport = Transport(rawValue: text) else { throw .invalid(key, "\"\(text)\" is not auto, bredr or le") }
                filter.transport = transport
            case ("DuplicateData", .boolean(let flag)):
                filter.duplicateData = flag
            case ("Discoverable", .boolean(let flag)):
                filter.discoverable = flag
            case ("Pattern", .string(let text)):
                filter.pattern = text
            default:
                if supportedKeys.contains(key) { throw .invalid(key, "wrong type \(value.signature)") }
                throw .invalid(key, "unknown key")
            }
        }
        if filter.rssi != nil && filter.pathloss != nil { throw .invalid("RSSI", "RSSI and Pathloss cannot both be set") }
        return filter
    }

    /// What one advertisement looked like to the adapter.
    struct Sighting: Sendable, Equatable {
        var address: String
        var name: String?
        var serviceUUIDs: [BluetoothUUID]
        var rssi: Int
        var txPower: Int?
    }

    func matches(_ sighting: Sighting) -> Bool {
        guard transport != .bredr else { return false }
        if let pattern, !pattern.isEmpty,
           !sighting.address.hasPrefix(pattern), !(sighting.name?.hasPrefix(pattern) ?? false) {
            return false
        }
        guard uuids.isEmpty || !Set(uuids).isDisjoint(with: sighting.serviceUUIDs) else { return false }
        if let rssi { return sighting.rssi >= rssi }
        if let pathloss {
            guard let txPower = sighting.txPower else { return false }
            return txPower - sighting.rssi <= pathloss
        }
        return true
    }
}

struct DiscoveryFilterError: Error, Equatable, Sendable {
    let key: String
    let reason: String

    static func invalid(_ key: String, _ reason: String) -> DiscoveryFilterError { .init(key: key, reason: reason) }
}

/// The discovery sessions of one adapter: which clients called StartDiscovery, and the filter each set.
/// Discovery runs while any session does; an advertisement is reported when it matches any session's filter
/// (or a session has none), because BlueZ merges the filters of all clients.
struct DiscoverySessions: Sendable, Equatable {
    enum Failure: Error, Equatable { case alreadyStarted, notStarted }

    private(set) var filters: [String: DiscoveryFilter] = [:]
    private(set) var clients: Set<String> = []

    var isDiscovering: Bool { !clients.isEmpty }

    /// Whether every session has a filter: then BlueZ reports each RSSI change, not only moves of 8 dBm.
    var isFiltered: Bool { isDiscovering && clients.allSatisfy { filters[$0] != nil } }

    /// Whether some session wants every advertisement's data, not only changes.
    var wantsDuplicateData: Bool { clients.contains { filters[$0]?.duplicateData ?? false } }

    /// Whether some session asked the adapter to be discoverable while discovering.
    var wantsDiscoverable: Bool { clients.contains { filters[$0]?.discoverable ?? false } }

    /// True when this started discovery (the first session).
    mutating func start(_ client: String) throws(Failure) -> Bool {
        guard !clients.contains(client) else { throw .alreadyStarted }
        clients.insert(client)
        return clients.count == 1
    }

    /// True when this stopped discovery (the last session).
    mutating func stop(_ client: String) throws(Failure) -> Bool {
        guard clients.remove(client) != nil else { throw .notStarted }
        return clients.isEmpty
    }

    mutating func setFilter(_ filter: DiscoveryFilter?, for client: String) {
        filters[client] = filter
    }

    /// A client left the bus: its session and filter go. True when that stopped discovery.
    mutating func removeClient(_ client: String) -> Bool {
        filters[client] = nil
        return clients.remove(client) != nil && clients.isEmpty
    }

    /// Power-off ends every session (BlueZ drops them with the controller state).
    mutating func removeAllSessions() { clients.removeAll() }

    func reports(_ sighting: DiscoveryFilter.Sighting) -> Bool {
        clients.contains { client in filters[client].map { $0.matches(sighting) } ?? true }
    }
}
