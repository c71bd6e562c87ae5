/// Why bytes could not become a value (or a value could not become bytes).
///
/// One enum for every codec in `GATT` and `StandardGATT` and the vendor codecs that share `ByteReader`, so a driver
/// can log and count malformed notifications the same way whatever the device. The gateway decides which of these a
/// user ever sees; the codecs know nothing of MQTT error codes.
public enum GATTCodecError: Error, Equatable, Sendable {
    /// The value ended early: decoding the next field needed `expected` bytes in total, only `actual` were there.
    case truncated(expected: Int, actual: Int)
    /// A field's value lies outside what its specification allows (a month of 13, a battery level of 101).
    case outOfRange(field: String, value: Int)
    /// The specification reserves this value for future use, so we cannot say what it means.
    case reservedValue(field: String, value: Int)
    /// A UTF-8 string characteristic held bytes that are not UTF-8.
    case invalidUTF8
    /// An id (a vendor's sensor or gesture number) that neither this code nor the device's own information
    /// lists, so the bytes after it cannot be framed.
    case unknownIdentifier(field: String, value: Int)
}
