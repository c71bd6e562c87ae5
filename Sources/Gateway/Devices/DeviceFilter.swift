import BlueZ

/// Which devices the gateway may manage, by address and driver. Deny wins over allow; an empty allow list
/// allows everything.
public struct DeviceFilter: Sendable, Equatable {
    public var allowAddresses: Set<BluetoothAddress> = []
    public var denyAddresses: Set<BluetoothAddress> = []
    public var allowDrivers: Set<String> = []
    public var denyDrivers: Set<String> = []

    public init(allowAddresses: Set<BluetoothAddress> = [], denyAddresses: Set<BluetoothAddress> = [],
                allowDrivers: Set<String> = [], denyDrivers: Set<String> = []) {
        self.allowAddresses = allowAddresses
        self.denyAddresses = denyAddresses
        self.allowDrivers = allowDrivers
        self.denyDrivers = denyDrivers
    }

    public func permits(address: BluetoothAddress, driver: String) -> Bool {
        if denyAddresses.contains(address) || denyDrivers.contains(driver) { return false }
        if !allowAddresses.isEmpty && !allowAddresses.contains(address) { return false }
        if !allowDrivers.isEmpty && !allowDrivers.contains(driver) { return false }
        return true
    }
}
