import DBus

/// SetDiscoveryFilter's options (bluez `doc/org.bluez.Adapter.rst`).
public struct DiscoveryFilter: Sendable, Equatable {
    /// Service UUIDs a device must advertise (any of them); empty for all.
    public var serviceUUIDs: [String]
    /// Minimum RSSI in dBm.
    public var rssi: Int16?
    /// "le" by default: BlueZ ignores non-discoverable LE advertisements unless the transport is set.
    public var transport: String
    /// Report every advertisement, not only changes: RSSI and data stay fresh.
    public var duplicateData: Bool
    /// Name or address prefix.
    public var pattern: String?

    public init(serviceUUIDs: [String] = [], rssi: Int16? = nil, transport: String = "le", duplicateData: Bool = true,
                pattern: String? = nil) {
        self.serviceUUIDs = serviceUUIDs
        self.rssi = rssi
        self.transport = transport
        self.duplicateData = duplicateData
        self.pattern = pattern
    }

    var dictionary: DBusValue {
        var values: [String: DBusValue] = ["Transport": .string(transport), "DuplicateData": .boolean(duplicateData)]
        if !serviceUUIDs.isEmpty { values["UUIDs"] = .strings(serviceUUIDs) }
        if let rssi { values["RSSI"] = .int16(rssi) }
        if let pattern { values["Pattern"] = .string(pattern) }
        return .stringVariantDictionary(values)
    }
}

extension BlueZClient {
    public func setPowered(_ powered: Bool, adapter: ObjectPath) async throws(BlueZError) {
        _ = try await call(adapter, BlueZNames.properties, "Set",
                           [.string(BlueZNames.adapter), "Powered", .variant(.boolean(powered))])
    }

    /// Sets the filter and starts discovering. BlueZ stops discovery when this connection goes away.
    public func startDiscovery(adapter: ObjectPath, filter: DiscoveryFilter) async throws(BlueZError) {
        _ = try await call(adapter, BlueZNames.adapter, "SetDiscoveryFilter", [filter.dictionary])
        do {
            _ = try await call(adapter, BlueZNames.adapter, "StartDiscovery")
        } catch .inProgress {
            // Already discovering (for us or another client): the filter still applies.
        }
    }

    public func stopDiscovery(adapter: ObjectPath) async throws(BlueZError) {
        do {
            _ = try await call(adapter, BlueZNames.adapter, "StopDiscovery")
        } catch .failed(let name, _) where name == "org.bluez.Error.NotReady" || name == "org.bluez.Error.Failed" {
            // Not discovering: nothing to stop.
        }
    }

    /// Forgets a device (and its bond).
    public func removeDevice(_ device: ObjectPath, adapter: ObjectPath) async throws(BlueZError) {
        _ = try await call(adapter, BlueZNames.adapter, "RemoveDevice", [.objectPath(device)])
    }
}
