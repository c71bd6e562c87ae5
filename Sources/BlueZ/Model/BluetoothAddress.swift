/// A Bluetooth device address, `AA:BB:CC:DD:EE:FF`, kept upper-case so it compares and prints one way.
public struct BluetoothAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String

    /// Accepts `aa:bb:cc:dd:ee:ff`, `AA-BB-…` and `aabbccddeeff`.
    public init?(_ text: String) {
        let hex = text.uppercased().filter { $0 != ":" && $0 != "-" }
        guard hex.count == 12, hex.allSatisfy({ $0.isASCII && $0.isHexDigit }) else { return nil }
        var pairs: [String] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            pairs.append(String(hex[index..<next]))
            index = next
        }
        rawValue = pairs.joined(separator: ":")
    }

    public var description: String { rawValue }

    /// BlueZ's object path element for a device: `dev_AA_BB_CC_DD_EE_FF`.
    public var pathElement: String { "dev_" + rawValue.replacingColons(with: "_") }

    /// Lower-case hex without separators, as the MQTT contract's device ids use it (`aabbccddeeff`).
    public var compactLowercase: String { rawValue.replacingColons(with: "").lowercased() }

    public static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool { lhs.rawValue < rhs.rawValue }
}

private extension String {
    func replacingColons(with replacement: String) -> String {
        split(separator: ":").joined(separator: replacement)
    }
}
