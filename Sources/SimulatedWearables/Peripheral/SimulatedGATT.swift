import Wearables

/// A simulated device's GATT table: what a central discovers after connecting.
///
/// It lists the device's own services only. The host that serves the table adds what every LE peripheral has in
/// front of them (the GAP service 0x1800 and the GATT service 0x1801), assigns attribute handles in declaration
/// order, and adds a Client Characteristic Configuration descriptor (0x2902) to every characteristic that can
/// notify or indicate: those belong to the ATT server, not to the device's behaviour.
public struct SimulatedService: Sendable, Equatable {
    public var uuid: BluetoothUUID
    public var isPrimary: Bool
    public var characteristics: [SimulatedCharacteristic]

    public init(_ uuid: BluetoothUUID, isPrimary: Bool = true, characteristics: [SimulatedCharacteristic]) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.characteristics = characteristics
    }
}

public struct SimulatedCharacteristic: Sendable, Equatable {
    public var uuid: BluetoothUUID
    public var flags: CharacteristicFlags
    /// What a read answers before the behaviour decides otherwise; behaviours that compute their value on each
    /// read ignore it.
    public var initialValue: [UInt8]
    /// Descriptors other than the Client Characteristic Configuration, which the host adds.
    public var descriptors: [SimulatedDescriptor]

    public init(_ uuid: BluetoothUUID, flags: CharacteristicFlags, initialValue: [UInt8] = [],
                descriptors: [SimulatedDescriptor] = []) {
        self.uuid = uuid
        self.flags = flags
        self.initialValue = initialValue
        self.descriptors = descriptors
    }

    /// Whether a central can subscribe to it (and so whether it gets a CCC descriptor).
    public var canSubscribe: Bool { !flags.isDisjoint(with: [.notify, .indicate]) }
}

/// A static descriptor (a user description, a valid range); writable ones keep what was written.
public struct SimulatedDescriptor: Sendable, Equatable {
    public var uuid: BluetoothUUID
    public var flags: DescriptorFlags
    public var value: [UInt8]

    public init(_ uuid: BluetoothUUID, flags: DescriptorFlags = .read, value: [UInt8]) {
        self.uuid = uuid
        self.flags = flags
        self.value = value
    }

    /// Client Characteristic Configuration (Core Specification Vol 3, Part G, 3.3.3.3).
    public static let clientCharacteristicConfigurationUUID = BluetoothUUID(0x2902)
}

extension Array where Element == SimulatedService {
    /// The characteristic with `uuid` in any service.
    public func characteristic(_ uuid: BluetoothUUID) -> SimulatedCharacteristic? {
        lazy.flatMap(\.characteristics).first { $0.uuid == uuid }
    }
}
