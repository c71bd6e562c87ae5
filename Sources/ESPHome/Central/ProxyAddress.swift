import BlueZ

/// A device address as ESPHome's API carries it: the six bytes as one `uint64`, most significant first
/// (`C0:FF:EE:00:00:01` is 0xC0FFEE000001).
public enum ProxyAddress {
    public static func uint64(_ address: BluetoothAddress) -> UInt64 {
        UInt64(address.rawValue.filter { $0 != ":" }, radix: 16) ?? 0
    }

    public static func address(_ value: UInt64) -> BluetoothAddress? {
        let hex = String(value & 0xFFFF_FFFF_FFFF, radix: 16)
        return BluetoothAddress(String(repeating: "0", count: 12 - hex.count) + hex)
    }
}
