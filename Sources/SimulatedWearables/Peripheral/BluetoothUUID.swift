import Wearables

/// A GATT or advertised UUID in the 128-bit, lower-case form BlueZ puts in its D-Bus properties
/// (`0000180d-0000-1000-8000-00805f9b34fb`), so values compare equal however they were written.
///
/// Simulated devices name their services and characteristics with it; it knows nothing of D-Bus.
public struct BluetoothUUID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The canonical 36-character form.
    public let string: String

    /// A 16-bit assigned number on the Bluetooth Base UUID.
    public init(_ shortUUID: UInt16) {
        string = GATTUUID.string(for: shortUUID)
    }

    /// Accepts the 128-bit form in any case, a 16-bit number as 4 hex digits (`180d`, `0x180D`), or a 32-bit one
    /// as 8 hex digits; nil for anything else.
    public init?(string text: String) {
        var hex = text.lowercased()
        if hex.hasPrefix("0x") { hex.removeFirst(2) }
        let digits = Set("0123456789abcdef")
        switch hex.count {
        case 4, 8:
            guard hex.allSatisfy(digits.contains) else { return nil }
            string = String(repeating: "0", count: 8 - hex.count) + hex + "-0000-1000-8000-00805f9b34fb"
        case 36:
            let groups = hex.split(separator: "-", omittingEmptySubsequences: false)
            guard groups.map(\.count) == [8, 4, 4, 4, 12], groups.allSatisfy({ $0.allSatisfy(digits.contains) }) else {
                return nil
            }
            string = hex
        default:
            return nil
        }
    }

    /// One of the 128-bit constants the codecs define (`GoFITUUID.service`), which their tests check are valid;
    /// one that were not would read 0x0000, which no simulated table uses, rather than crash a simulation.
    init(constant text: String) {
        self = BluetoothUUID(string: text) ?? BluetoothUUID(0x0000)
    }

    /// The 16-bit assigned number, when this UUID is one.
    public var shortUUID: UInt16? { GATTUUID.shortForm(of: string) }

    public var description: String { string }

    public static func < (lhs: BluetoothUUID, rhs: BluetoothUUID) -> Bool { lhs.string < rhs.string }
}
