import DBus

/// What changed in the model, for the gateway's device sessions and discovery.
public enum BlueZModelEvent: Sendable, Equatable {
    case adapterAdded(AdapterInfo)
    case adapterChanged(AdapterInfo, changed: Set<String>)
    case adapterRemoved(ObjectPath)
    case deviceAdded(DeviceInfo)
    case deviceChanged(DeviceInfo, changed: Set<String>)
    case deviceRemoved(DeviceInfo)
    /// A GATT service, characteristic or descriptor appeared or went away below a device.
    case gattChanged(device: ObjectPath)
    /// A characteristic's `Value` changed: a notification or indication delivered with StartNotify.
    case characteristicValue(ObjectPath, [UInt8])
    /// The whole model was rebuilt (bluetoothd restarted).
    case reset
}

/// BlueZ's object tree as a value: built from GetManagedObjects and kept current by InterfacesAdded,
/// InterfacesRemoved and PropertiesChanged. Pure: each change returns the events it caused, so the same
/// sequence of signals always gives the same model (tested without a bus).
public struct BlueZModel: Sendable, Equatable {
    /// Every object's properties per interface, as BlueZ reported them.
    private var objects: [ObjectPath: [String: [String: DBusValue]]] = [:]
    public private(set) var adapters: [ObjectPath: AdapterInfo] = [:]
    public private(set) var devices: [ObjectPath: DeviceInfo] = [:]
    public private(set) var services: [ObjectPath: GattServiceInfo] = [:]
    public private(set) var characteristics: [ObjectPath: GattCharacteristicInfo] = [:]
    public private(set) var descriptors: [ObjectPath: GattDescriptorInfo] = [:]
    /// Advertisements each adapter reported since the model was built (a device object appearing with a signal level,
    /// or its RSSI or advertised data changing): what the radio watchdog compares between two looks, at no cost per
    /// advertisement beyond an addition.
    public private(set) var advertisementsHeard: [ObjectPath: UInt64] = [:]

    /// The device properties an advertisement refreshes.
    static let advertisedProperties: Set<String> = ["RSSI", "ManufacturerData", "ServiceData", "TxPower"]

    public init() {}

    /// Replaces everything with a GetManagedObjects reply (`a{oa{sa{sv}}}`).
    public mutating func reset(managedObjects: DBusValue) -> [BlueZModelEvent] {
        self = BlueZModel()
        for entry in managedObjects.dictionaryEntries ?? [] {
            guard let path = entry.key.objectPathValue else { continue }
            _ = interfacesAdded(path: path, interfaces: Self.interfaces(entry.value))
        }
        return [.reset]
    }

    /// `other`'s objects added to these (several radios' trees side by side: their paths never overlap, each under its
    /// own adapter); an object in both keeps `other`'s.
    public mutating func merge(_ other: BlueZModel) {
        objects.merge(other.objects) { $1 }
        adapters.merge(other.adapters) { $1 }
        devices.merge(other.devices) { $1 }
        services.merge(other.services) { $1 }
        characteristics.merge(other.characteristics) { $1 }
        descriptors.merge(other.descriptors) { $1 }
        advertisementsHeard.merge(other.advertisementsHeard) { $0 + $1 }
    }

    /// Parses InterfacesAdded's second argument (`a{sa{sv}}`).
    public static func interfaces(_ value: DBusValue) -> [String: [String: DBusValue]] {
        var result: [String: [String: DBusValue]] = [:]
        for entry in value.dictionaryEntries ?? [] {
            guard let name = entry.key.stringValue else { continue }
            result[name] = entry.value.stringKeyedDictionary ?? [:]
        }
        return result
    }

    public mutating func interfacesAdded(path: ObjectPath, interfaces: [String: [String: DBusValue]]) -> [BlueZModelEvent] {
        var stored = objects[path] ?? [:]
        for (name, properties) in interfaces { stored[name, default: [:]].merge(properties) { $1 } }
        objects[path] = stored
        var events: [BlueZModelEvent] = []
        for name in interfaces.keys.sorted() {
            guard let properties = stored[name] else { continue }
            switch name {
            case BlueZNames.adapter:
                let adapter = AdapterInfo(path: path, properties: properties)
                adapters[path] = adapter
                events.append(.adapterAdded(adapter))
            case BlueZNames.device:
                let device = DeviceInfo(path: path, properties: properties)
                devices[path] = device
                if device.rssi != nil { advertisementsHeard[device.adapter, default: 0] &+= 1 }
                events.append(.deviceAdded(device))
            case BlueZNames.gattService:
                services[path] = GattServiceInfo(path: path, properties: properties)
                events.append(.gattChanged(device: services[path]!.device))
            case BlueZNames.gattCharacteristic:
                characteristics[path] = GattCharacteristicInfo(path: path, properties: properties)
                events.append(.gattChanged(device: device(owning: path)))
            case BlueZNames.gattDescriptor:
                descriptors[path] = GattDescriptorInfo(path: path, properties: properties)
                events.append(.gattChanged(device: device(owning: path)))
            default:
                break
            }
        }
        return events
    }

    public mutating func interfacesRemoved(path: ObjectPath, interfaces: [String]) -> [BlueZModelEvent] {
        var events: [BlueZModelEvent] = []
        for name in interfaces {
            objects[path]?[name] = nil
            switch name {
            case BlueZNames.adapter:
                if adapters.removeValue(forKey: path) != nil { events.append(.adapterRemoved(path)) }
            case BlueZNames.device:
                if let removed = devices.removeValue(forKey: path) { events.append(.deviceRemoved(removed)) }
            case BlueZNames.gattService:
                if let removed = services.removeValue(forKey: path) { events.append(.gattChanged(device: removed.device)) }
            case BlueZNames.gattCharacteristic:
                let owner = device(owning: path)
                if characteristics.removeValue(forKey: path) != nil { events.append(.gattChanged(device: owner)) }
            case BlueZNames.gattDescriptor:
                let owner = device(owning: path)
                if descriptors.removeValue(forKey: path) != nil { events.append(.gattChanged(device: owner)) }
            default:
                break
            }
        }
        if objects[path]?.isEmpty == true { objects[path] = nil }
        return events
    }

    public mutating func propertiesChanged(path: ObjectPath, interface: String, changed: [String: DBusValue],
                                           invalidated: [String] = []) -> [BlueZModelEvent] {
        guard objects[path]?[interface] != nil else { return [] }
        if interface == BlueZNames.gattCharacteristic, changed.count == 1, let value = changed["Value"]?.bytesValue {
            // The notification hot path: no model rebuild for a value we do not keep.
            return [.characteristicValue(path, value)]
        }
        objects[path]![interface]!.merge(changed) { $1 }
        for name in invalidated { objects[path]![interface]![name] = nil }
        let properties = objects[path]![interface]!
        let names = Set(changed.keys).union(invalidated)
        switch interface {
        case BlueZNames.adapter:
            let adapter = AdapterInfo(path: path, properties: properties)
            adapters[path] = adapter
            return [.adapterChanged(adapter, changed: names)]
        case BlueZNames.device:
            let device = DeviceInfo(path: path, properties: properties)
            devices[path] = device
            if changed.keys.contains(where: Self.advertisedProperties.contains) { advertisementsHeard[device.adapter, default: 0] &+= 1 }
            return [.deviceChanged(device, changed: names)]
        case BlueZNames.gattCharacteristic:
            characteristics[path] = GattCharacteristicInfo(path: path, properties: properties)
            if let value = changed["Value"]?.bytesValue { return [.characteristicValue(path, value)] }
            return []
        default:
            return []
        }
    }

    // MARK: Queries

    public func device(address: BluetoothAddress, adapter: ObjectPath? = nil) -> DeviceInfo? {
        devices.values.first { $0.address == address && (adapter == nil || $0.adapter == adapter) }
    }

    /// The device path above a GATT object's path.
    public func device(owning path: ObjectPath) -> ObjectPath {
        var current: ObjectPath? = path
        while let candidate = current {
            if devices[candidate] != nil { return candidate }
            current = candidate.parent
        }
        return path.parent?.parent ?? path
    }

    public func services(of device: ObjectPath) -> [GattServiceInfo] {
        services.values.filter { $0.device == device }.sorted { $0.path < $1.path }
    }

    public func characteristics(of service: ObjectPath) -> [GattCharacteristicInfo] {
        characteristics.values.filter { $0.service == service }.sorted { $0.path < $1.path }
    }

    /// The characteristic with `uuid` on `device`, optionally in a given service (UUIDs in BlueZ's lower-case
    /// 128-bit form).
    public func characteristic(device: ObjectPath, service serviceUUID: String? = nil,
                               uuid: String) -> GattCharacteristicInfo? {
        let wanted = uuid.lowercased()
        for service in services(of: device) where serviceUUID == nil || service.uuid == serviceUUID?.lowercased() {
            if let found = characteristics(of: service.path).first(where: { $0.uuid == wanted }) { return found }
        }
        return nil
    }
}
