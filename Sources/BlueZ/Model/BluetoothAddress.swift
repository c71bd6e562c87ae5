/// A Bluetooth device address, `AA:BB:CC:DD:EE:FF`, kept upper-case so it compares and prints one way (as BlueZ
/// writes it in its `Address` properties). The daemon and the simulator share this one type (docs/decisions.md).
public struct BluetoothAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String

    /// Accepts `aa:bb:cc:dd:ee:ff`, `AA-BB-…` and `aabbccddeeff`: the spellings users write in configuration and
    /// requests.
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

    /// Accepts only BlueZ's own spelling: six hex pairs separated by colons, in any case. The simulator reads
    /// addresses so (scenarios, its control interface), as bluetoothd does on D-Bus. (A function, not an
    /// initializer, so `BluetoothAddress.init` stays unambiguous where it is passed as a function.)
    public static func colonSeparated(_ text: String) -> BluetoothAddress? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy { $0.isASCII && $0.isHexDigit } }) else {
            return nil
        }
        return BluetoothAddress(rawValue: text.uppercased())
    }

    private init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    /// The six bytes, most significant first.
    public var bytes: [UInt8] { rawValue.split(separator: ":").compactMap { UInt8($0, radix: 16) } }

    /// BlueZ's object path element for a device: `dev_AA_BB_CC_DD_EE_FF`.
    public var pathElement: String { "dev_" + rawValue.replacingColons(with: "_") }

    /// Lower-case hex without separators, as the MQTT contract's device ids use it (`aabbccddeeff`).
    public var compactLowercase: String { rawValue.replacingColons(with: "").lowercased() }

    /// `AA-BB-CC-DD-EE-FF`: what BlueZ reports as Alias for a device that has no name.
    public var dashed: String { rawValue.replacingColons(with: "-") }

    /// The address with `offset` added to its last byte, wrapping without carry (`…:FF` + 1 is `…:00`): where a
    /// device's companion (its DFU bootloader) advertises.
    public func addingToLastByte(_ offset: UInt8) -> BluetoothAddress {
        var bytes = bytes
        bytes[bytes.count - 1] &+= offset
        return BluetoothAddress(rawValue: bytes.map(Self.hex).joined(separator: ":"))
    }

    /// Upper-case hex of the same width, so the text's order is the bytes' order.
    public static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool { lhs.rawValue < rhs.rawValue }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}

private extension String {
    func replacingColons(with replacement: String) -> String {
        split(separator: ":").joined(separator: replacement)
    }
}
