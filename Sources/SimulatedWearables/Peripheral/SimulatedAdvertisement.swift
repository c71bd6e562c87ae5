import Wearables

/// What a simulated device puts in its advertisements (and scan responses): the fields a central's
/// discovery reports. Values only; the host decides when and how often it is seen.
public struct SimulatedAdvertisement: Sendable, Equatable {
    /// The Complete Local Name, or nil when the device advertises none.
    public var localName: String?
    public var serviceUUIDs: [BluetoothUUID]
    /// Manufacturer Specific Data by company identifier.
    public var manufacturerData: [UInt16: [UInt8]]
    public var serviceData: [BluetoothUUID: [UInt8]]
    /// GAP Appearance (Assigned Numbers, 2.6), or nil when not advertised.
    public var appearance: UInt16?
    /// The advertised TX power level in dBm, or nil when not advertised.
    public var txPower: Int?
    /// The Flags AD type; 0x06 is "LE General Discoverable, BR/EDR not supported", what wearables send.
    public var flags: UInt8
    /// The signal strength a central a metre or two away would see.
    public var rssi: Int
    public var isConnectable: Bool

    public init(localName: String?, serviceUUIDs: [BluetoothUUID], manufacturerData: [UInt16: [UInt8]] = [:],
                serviceData: [BluetoothUUID: [UInt8]] = [:], appearance: UInt16? = nil, txPower: Int? = nil,
                flags: UInt8 = 0x06, rssi: Int = -60, isConnectable: Bool = true) {
        self.localName = localName
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.appearance = appearance
        self.txPower = txPower
        self.flags = flags
        self.rssi = rssi
        self.isConnectable = isConnectable
    }
}
