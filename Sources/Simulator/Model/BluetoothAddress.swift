/// A Bluetooth device address as BlueZ writes it (`AA:BB:CC:DD:EE:FF`, upper case) and the object-path element
/// BlueZ derives from it (`dev_AA_BB_CC_DD_EE_FF`).
public struct BluetoothAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// Six hex pairs separated by colons, in any case; nil otherwise.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            bytes.append(byte)
        }
        self.bytes = bytes
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    /// The address with `offset` added to its last byte, wrapping without carry (`…:FF` + 1 is `…:00`): where a
    /// device's companion (its DFU bootloader) advertises.
    public func addingToLastByte(_ offset: UInt8) -> BluetoothAddress {
        BluetoothAddress(bytes: bytes.dropLast() + [bytes[5] &+ offset])
    }

    public var description: String { bytes.map(Self.hex).joined(separator: ":") }

    /// `dev_AA_BB_CC_DD_EE_FF`, the last element of a device's object path.
    public var pathElement: String { "dev_" + bytes.map(Self.hex).joined(separator: "_") }

    /// `AA-BB-CC-DD-EE-FF`: what BlueZ reports as Alias for a device that has no name.
    public var dashed: String { bytes.map(Self.hex).joined(separator: "-") }

    public static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}
