import DBus

/// An adapter (`org.bluez.Adapter1`) as the model knows it.
public struct AdapterInfo: Sendable, Equatable {
    public var path: ObjectPath
    public var address: BluetoothAddress?
    public var name: String
    public var alias: String
    public var powered: Bool
    public var discovering: Bool

    /// `hci0` from `/org/bluez/hci0`; numbering can change across reboots, so configuration prefers the address.
    public var id: String { path.rawValue.split(separator: "/").last.map(String.init) ?? path.rawValue }

    init(path: ObjectPath, properties: [String: DBusValue]) {
        self.path = path
        address = properties["Address"]?.stringValue.flatMap(BluetoothAddress.init)
        name = properties["Name"]?.stringValue ?? ""
        alias = properties["Alias"]?.stringValue ?? name
        powered = properties["Powered"]?.boolValue ?? false
        discovering = properties["Discovering"]?.boolValue ?? false
    }
}

/// A device (`org.bluez.Device1`): what it advertises and the state of our link to it.
public struct DeviceInfo: Sendable, Equatable {
    public var path: ObjectPath
    public var adapter: ObjectPath
    public var address: BluetoothAddress?
    public var addressType: String
    public var name: String?
    public var alias: String?
    public var rssi: Int?
    public var txPower: Int?
    public var appearance: Int?
    public var connected: Bool
    public var servicesResolved: Bool
    public var paired: Bool
    public var bonded: Bool
    public var trusted: Bool
    public var blocked: Bool
    /// Advertised or resolved service UUIDs, lower-case 128-bit strings as BlueZ gives them.
    public var serviceUUIDs: [String]
    /// Company identifier → data.
    public var manufacturerData: [UInt16: [UInt8]]
    /// Service UUID → data.
    public var serviceData: [String: [UInt8]]

    init(path: ObjectPath, properties: [String: DBusValue]) {
        self.path = path
        adapter = properties["Adapter"]?.objectPathValue ?? path.parent ?? "/"
        address = properties["Address"]?.stringValue.flatMap(BluetoothAddress.init)
        addressType = properties["AddressType"]?.stringValue ?? "public"
        name = properties["Name"]?.stringValue
        alias = properties["Alias"]?.stringValue
        rssi = properties["RSSI"]?.integerValue.map(Int.init)
        txPower = properties["TxPower"]?.integerValue.map(Int.init)
        appearance = properties["Appearance"]?.integerValue.map(Int.init)
        servicesResolved = properties["ServicesResolved"]?.boolValue ?? false
        // Resolved services imply a link. Real bluetoothd 5.66 was seen (tests/realbluez) reporting
        // ServicesResolved=true without ever signalling Connected=true on the central's device object.
        connected = (properties["Connected"]?.boolValue ?? false) || servicesResolved
        paired = properties["Paired"]?.boolValue ?? false
        bonded = properties["Bonded"]?.boolValue ?? false
        trusted = properties["Trusted"]?.boolValue ?? false
        blocked = properties["Blocked"]?.boolValue ?? false
        serviceUUIDs = (properties["UUIDs"]?.stringArrayValue ?? []).map { $0.lowercased() }
        manufacturerData = [:]
        for (key, value) in properties["ManufacturerData"]?.integerKeyedDictionary ?? [:] {
            if let company = UInt16(exactly: key), let bytes = value.bytesValue { manufacturerData[company] = bytes }
        }
        serviceData = [:]
        for (key, value) in properties["ServiceData"]?.stringKeyedDictionary ?? [:] {
            if let bytes = value.bytesValue { serviceData[key.lowercased()] = bytes }
        }
    }
}

/// A GATT service (`org.bluez.GattService1`).
public struct GattServiceInfo: Sendable, Equatable {
    public var path: ObjectPath
    public var uuid: String
    public var primary: Bool
    public var device: ObjectPath

    init(path: ObjectPath, properties: [String: DBusValue]) {
        self.path = path
        uuid = properties["UUID"]?.stringValue?.lowercased() ?? ""
        primary = properties["Primary"]?.boolValue ?? true
        device = properties["Device"]?.objectPathValue ?? path.parent ?? "/"
    }
}

/// A GATT characteristic (`org.bluez.GattCharacteristic1`).
public struct GattCharacteristicInfo: Sendable, Equatable {
    public var path: ObjectPath
    public var uuid: String
    public var service: ObjectPath
    /// BlueZ's flags: "read", "write", "write-without-response", "notify", "indicate", …
    public var flags: Set<String>
    public var notifying: Bool
    public var notifyAcquired: Bool
    public var writeAcquired: Bool
    public var mtu: Int?

    public var canNotify: Bool { flags.contains("notify") || flags.contains("indicate") }

    init(path: ObjectPath, properties: [String: DBusValue]) {
        self.path = path
        uuid = properties["UUID"]?.stringValue?.lowercased() ?? ""
        service = properties["Service"]?.objectPathValue ?? path.parent ?? "/"
        flags = Set(properties["Flags"]?.stringArrayValue ?? [])
        notifying = properties["Notifying"]?.boolValue ?? false
        notifyAcquired = properties["NotifyAcquired"]?.boolValue ?? false
        writeAcquired = properties["WriteAcquired"]?.boolValue ?? false
        mtu = properties["MTU"]?.integerValue.map(Int.init)
    }
}

/// A GATT descriptor (`org.bluez.GattDescriptor1`).
public struct GattDescriptorInfo: Sendable, Equatable {
    public var path: ObjectPath
    public var uuid: String
    public var characteristic: ObjectPath

    init(path: ObjectPath, properties: [String: DBusValue]) {
        self.path = path
        uuid = properties["UUID"]?.stringValue?.lowercased() ?? ""
        characteristic = properties["Characteristic"]?.objectPathValue ?? path.parent ?? "/"
    }
}
