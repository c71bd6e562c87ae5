import Wearables

/// How a characteristic may be used: the Characteristic Properties and Extended Properties bit fields of the
/// Core Specification (Vol 3, Part G, 3.3.1.1 and 3.3.3.1), with the names BlueZ uses in its `Flags`
/// property (`doc/org.bluez.GattCharacteristic.rst`). The same names are what a GATT server registered with
/// bluetoothd's GattManager1 declares, so a simulated device's table can later be served by a real adapter.
public struct CharacteristicFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let broadcast = CharacteristicFlags(rawValue: 0x01)
    public static let read = CharacteristicFlags(rawValue: 0x02)
    public static let writeWithoutResponse = CharacteristicFlags(rawValue: 0x04)
    public static let write = CharacteristicFlags(rawValue: 0x08)
    public static let notify = CharacteristicFlags(rawValue: 0x10)
    public static let indicate = CharacteristicFlags(rawValue: 0x20)
    public static let authenticatedSignedWrites = CharacteristicFlags(rawValue: 0x40)
    public static let extendedProperties = CharacteristicFlags(rawValue: 0x80)
    public static let reliableWrite = CharacteristicFlags(rawValue: 0x100)
    public static let writableAuxiliaries = CharacteristicFlags(rawValue: 0x200)

    /// BlueZ's names, in the order BlueZ lists them (`chrc_props` then `chrc_ext_props` in `src/gatt-client.c`).
    public static let bluezNames: [(flag: CharacteristicFlags, name: String)] = [
        (.broadcast, "broadcast"), (.read, "read"), (.writeWithoutResponse, "write-without-response"),
        (.write, "write"), (.notify, "notify"), (.indicate, "indicate"),
        (.authenticatedSignedWrites, "authenticated-signed-writes"), (.extendedProperties, "extended-properties"),
        (.reliableWrite, "reliable-write"), (.writableAuxiliaries, "writable-auxiliaries"),
    ]

    /// The flags as BlueZ's `Flags` property lists them.
    public var bluezNames: [String] {
        Self.bluezNames.filter { contains($0.flag) }.map(\.name)
    }

    /// Parses BlueZ's names; nil names the first one it does not know.
    public init(bluezNames names: [String]) throws(UnknownFlag) {
        var flags: CharacteristicFlags = []
        for name in names {
            guard let known = Self.bluezNames.first(where: { $0.name == name }) else { throw UnknownFlag(name: name) }
            flags.insert(known.flag)
        }
        self = flags
    }

    public struct UnknownFlag: Error, Equatable, Sendable {
        public let name: String
    }
}

/// How a descriptor may be used by a central (BlueZ's descriptor flag names).
public struct DescriptorFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let read = DescriptorFlags(rawValue: 0x01)
    public static let write = DescriptorFlags(rawValue: 0x02)
}
