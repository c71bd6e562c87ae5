/// One message of ESPHome's native API: its type id (the `(id)` option of its protobuf message in api.proto) and
/// the message's protobuf bytes.
public struct APIMessage: Equatable, Sendable {
    public var type: UInt32
    public var payload: [UInt8]

    public init(type: UInt32, payload: [UInt8]) {
        self.type = type
        self.payload = payload
    }
}

/// Why bytes from the other side are not a frame of the native API. Each ends the connection.
public enum APIFrameError: Error, Equatable, Sendable {
    /// A plaintext reader met the encrypted preamble (0x01): the device has `api.encryption` and needs its key.
    case requiresEncryption
    /// An encrypted reader met the plaintext preamble (0x00): the device has no key set.
    case plaintextPeer
    case badPreamble(UInt8)
    /// A length or type varint longer than 32 bits.
    case badVarint
    /// A frame larger than the reader accepts (its size).
    case tooLarge(Int)
    /// An encrypted frame's inner header disagrees with its size.
    case badInnerLength
    /// A hello or handshake frame that does not say what ESPHome's do.
    case badHandshake(String)
}

/// Reads and writes the unsigned LEB128 varints of plaintext frames, at most 32 bits.
enum VarUInt {
    static func encode(_ value: UInt32) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
        return bytes
    }

    /// The value and the bytes it took, nil when `bytes` ends inside it.
    static func decode(_ bytes: ArraySlice<UInt8>) throws(APIFrameError) -> (value: UInt32, length: Int)? {
        var value: UInt64 = 0
        for (offset, byte) in bytes.enumerated() {
            guard offset < 5 else { throw .badVarint }
            value |= UInt64(byte & 0x7F) << (7 * UInt64(offset))
            if byte & 0x80 == 0 {
                guard value <= UInt64(UInt32.max) else { throw .badVarint }
                return (UInt32(value), offset + 1)
            }
        }
        return nil
    }
}
