/// What a Bluetooth proxy says it can do (`DeviceInfoResponse.bluetooth_proxy_feature_flags`), as ESPHome defines the
/// bits (aioesphomeapi's `BluetoothProxyFeature`). wear2mqtt needs active connections, remote caching (connect with
/// and without the proxy's GATT cache) and raw advertisements.
public struct BluetoothProxyFeatures: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let passiveScan = Self(rawValue: 1 << 0)
    public static let activeConnections = Self(rawValue: 1 << 1)
    public static let remoteCaching = Self(rawValue: 1 << 2)
    public static let pairing = Self(rawValue: 1 << 3)
    public static let cacheClearing = Self(rawValue: 1 << 4)
    public static let rawAdvertisements = Self(rawValue: 1 << 5)
    public static let stateAndMode = Self(rawValue: 1 << 6)
    public static let connectionParameters = Self(rawValue: 1 << 7)

    /// What a proxy must offer to serve wear2mqtt's drivers.
    public static let required: Self = [.activeConnections, .remoteCaching, .rawAdvertisements]
}
