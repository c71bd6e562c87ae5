#if canImport(Glibc)
import Glibc
#endif

/// One D-Bus message as it came off a socket, read in place: its length from the fixed header, and the header fields
/// a signal's receiver needs (D-Bus specification, "Message Format" and "Header Fields"). Nothing is copied or
/// allocated; the views point into the bytes it was made from and are valid while they are.
///
/// It does not validate the whole message the way libdbus does (UTF-8, signatures of the fields it skips, nesting):
/// it checks what it reads, bounds first, and anything it does not understand makes it answer nil. A message that
/// matters beyond the fast path is handed to libdbus (`dbus_message_demarshal`), which validates it fully.
public struct WireMessage {
    public enum MessageType: UInt8 { case methodCall = 1, methodReturn = 2, error = 3, signal = 4 }

    /// The specification's limit on a whole message.
    static let maximumLength = 1 << 27
    /// Endianness, type, flags, version, body length, serial, and the header field array's length.
    public static let fixedHeaderLength = 16

    public let bytes: UnsafeRawBufferPointer
    let isBigEndian: Bool
    public let type: UInt8
    public let serial: UInt32
    public let replySerial: UInt32?
    public let path: UnsafeRawBufferPointer?
    public let interface: UnsafeRawBufferPointer?
    public let member: UnsafeRawBufferPointer?
    public let errorName: UnsafeRawBufferPointer?
    public let sender: UnsafeRawBufferPointer?
    public let signature: UnsafeRawBufferPointer?
    /// Where the body begins, from the message's first byte (a multiple of 8).
    public let bodyOffset: Int

    /// How long the message at the start of `bytes` is: nil while its fixed header is incomplete; `.failure` when the
    /// header cannot begin a message (the stream is then beyond repair).
    public static func length(atStartOf bytes: UnsafeRawBufferPointer) -> Result<Int, WireMessageError>? {
        guard bytes.count >= fixedHeaderLength else { return nil }
        let bigEndian: Bool
        switch bytes[0] {
        case UInt8(ascii: "l"): bigEndian = false
        case UInt8(ascii: "B"): bigEndian = true
        default: return .failure(.badEndianness(bytes[0]))
        }
        guard bytes[3] == 1 else { return .failure(.badVersion(bytes[3])) }
        let bodyLength = Int(WireReader.uint32(bytes, at: 4, bigEndian: bigEndian))
        let fieldsLength = Int(WireReader.uint32(bytes, at: 12, bigEndian: bigEndian))
        let total = fixedHeaderLength + WireReader.aligned(fieldsLength, to: 8) + bodyLength
        guard bodyLength <= maximumLength, fieldsLength <= maximumLength, total <= maximumLength else {
            return .failure(.tooLong(total))
        }
        return .success(total)
    }

    /// Reads the header of the whole message `bytes` (exactly `length(atStartOf:)` long); nil when it is malformed.
    public init?(_ bytes: UnsafeRawBufferPointer) {
        guard case .success(let length)? = Self.length(atStartOf: bytes), length == bytes.count,
              let type = Optional(bytes[1]), type >= 1, type <= 4 else { return nil }
        let bigEndian = bytes[0] == UInt8(ascii: "B")
        let fieldsEnd = Self.fixedHeaderLength + Int(WireReader.uint32(bytes, at: 12, bigEndian: bigEndian))
        var reader = WireReader(bytes: bytes, bigEndian: bigEndian, position: Self.fixedHeaderLength, end: fieldsEnd)
        var replySerial: UInt32?
        var path, interface, member, errorName, sender, signature: UnsafeRawBufferPointer?
        while reader.position < fieldsEnd {
            // Each field is a STRUCT (BYTE code, VARIANT value), aligned to 8.
            guard reader.align(8), let code = reader.byte(), let fieldType = reader.signature(), fieldType.count == 1 else {
                return nil
            }
            switch fieldType[0] {
            case UInt8(ascii: "o"), UInt8(ascii: "s"):
                guard let text = reader.string() else { return nil }
                switch code {
                case 1: path = text
                case 2: interface = text
                case 3: member = text
                case 4: errorName = text
                case 6: break  // DESTINATION
                case 7: sender = text
                default: break
                }
            case UInt8(ascii: "g"):
                guard let text = reader.signature() else { return nil }
                if code == 8 { signature = text }
            case UInt8(ascii: "u"):
                guard let value = reader.uint32() else { return nil }
                if code == 5 { replySerial = value }
            default:
                // Fields of other types are not in the specification; libdbus refuses them too.
                return nil
            }
        }
        guard reader.position == fieldsEnd else { return nil }
        self.bytes = bytes
        isBigEndian = bigEndian
        self.type = type
        serial = WireReader.uint32(bytes, at: 8, bigEndian: bigEndian)
        self.replySerial = replySerial
        self.path = path
        self.interface = interface
        self.member = member
        self.errorName = errorName
        self.sender = sender
        self.signature = signature
        bodyOffset = Self.fixedHeaderLength + WireReader.aligned(fieldsEnd - Self.fixedHeaderLength, to: 8)
    }

    /// A reader over the body; alignment counts from the message's first byte, as the specification says.
    var bodyReader: WireReader {
        WireReader(bytes: bytes, bigEndian: isBigEndian, position: bodyOffset, end: bytes.count)
    }

    /// Whether `field` holds exactly `text`'s UTF-8.
    static func field(_ field: UnsafeRawBufferPointer?, is text: StaticString) -> Bool {
        guard let field, field.count == text.utf8CodeUnitCount else { return false }
        // memcmp: `elementsEqual` compared byte by byte, 1,500 instructions a signal for its four names.
        return field.isEmpty || memcmp(field.baseAddress!, text.utf8Start, field.count) == 0
    }
}

public enum WireMessageError: Error, Equatable, CustomStringConvertible {
    case badEndianness(UInt8)
    case badVersion(UInt8)
    case tooLong(Int)

    public var description: String {
        switch self {
        case .badEndianness(let byte): "a message begins with \(byte), not an endianness mark"
        case .badVersion(let version): "a message of protocol version \(version)"
        case .tooLong(let length): "a message of \(length) bytes, over the specification's 128 MiB"
        }
    }
}

/// A cursor over marshalled D-Bus data: each read checks its bounds and answers nil past `end`.
struct WireReader {
    let bytes: UnsafeRawBufferPointer
    let bigEndian: Bool
    private(set) var position: Int
    let end: Int

    init(bytes: UnsafeRawBufferPointer, bigEndian: Bool, position: Int, end: Int) {
        self.bytes = bytes
        self.bigEndian = bigEndian
        self.position = position
        self.end = min(end, bytes.count)
    }

    static func aligned(_ offset: Int, to alignment: Int) -> Int { (offset + alignment - 1) & ~(alignment - 1) }

    static func uint32(_ bytes: UnsafeRawBufferPointer, at offset: Int, bigEndian: Bool) -> UInt32 {
        let value = bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
        return bigEndian ? UInt32(bigEndian: value) : UInt32(littleEndian: value)
    }

    /// Skips the padding before a value of `alignment` (the padding must lie inside the data).
    mutating func align(_ alignment: Int) -> Bool {
        let next = Self.aligned(position, to: alignment)
        guard next <= end else { return false }
        position = next
        return true
    }

    mutating func byte() -> UInt8? {
        guard position < end else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func uint32() -> UInt32? {
        guard align(4), end - position >= 4 else { return nil }
        defer { position += 4 }
        return Self.uint32(bytes, at: position, bigEndian: bigEndian)
    }

    /// A STRING or OBJECT_PATH: its bytes without the terminating NUL, which must be there.
    mutating func string() -> UnsafeRawBufferPointer? {
        guard let length = uint32().map(Int.init), length < end - position, bytes[position + length] == 0 else { return nil }
        defer { position += length + 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<position + length])
    }

    /// A SIGNATURE: one length byte, the characters, a NUL.
    mutating func signature() -> UnsafeRawBufferPointer? {
        guard let length = byte().map(Int.init), length < end - position, bytes[position + length] == 0 else { return nil }
        defer { position += length + 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<position + length])
    }

    /// An ARRAY of bytes (`ay`): its data.
    mutating func byteArray() -> UnsafeRawBufferPointer? {
        guard let length = uint32().map(Int.init), length <= end - position else { return nil }
        defer { position += length }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<position + length])
    }
}
