/// One message as the spool keeps it on disk. The layout, all little-endian:
///
///     record = [body length u32][CRC-32 of body u32][body]
///     body   = [sequence u64][enqueued at, Unix ms u64][qos u8][flags u8: bit0 retain]
///              [topic: u16 length + UTF-8][properties][payload: u32 length + bytes]
///     properties = [presence u8: 1 response topic, 2 correlation data, 4 content type, 8 expiry, 16 user]
///              then each present one: strings and binary as u16 length + bytes, expiry u32,
///              user properties u16 count + (name, value) string pairs
///
/// Pure: bytes in, values out; a malformed body is a typed error, never a crash.
package struct SpooledRecord: Equatable, Sendable {
    package var sequence: UInt64
    package var enqueuedAtMilliseconds: UInt64
    package var message: OutgoingMessage
}

package enum SpoolRecordCodec {
    package static let headerSize = 8

    package enum DecodeError: Error, Equatable {
        case truncated
        case checksumMismatch
        case malformed(String)
    }

    package static func encode(_ record: SpooledRecord) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(40 + record.message.topic.utf8.count + record.message.payload.count)
        body.appendLittleEndian(record.sequence)
        body.appendLittleEndian(record.enqueuedAtMilliseconds)
        body.append(UInt8(record.message.qos.rawValue))
        body.append(record.message.retain ? 1 : 0)
        body.appendShortBytes(Array(record.message.topic.utf8))
        let properties = record.message.properties
        var presence: UInt8 = 0
        if properties.responseTopic != nil { presence |= 1 }
        if properties.correlationData != nil { presence |= 2 }
        if properties.contentType != nil { presence |= 4 }
        if properties.messageExpiryInterval != nil { presence |= 8 }
        if !properties.userProperties.isEmpty { presence |= 16 }
        body.append(presence)
        if let topic = properties.responseTopic { body.appendShortBytes(Array(topic.utf8)) }
        if let data = properties.correlationData { body.appendShortBytes(data) }
        if let type = properties.contentType { body.appendShortBytes(Array(type.utf8)) }
        if let expiry = properties.messageExpiryInterval { body.appendLittleEndian(expiry) }
        if !properties.userProperties.isEmpty {
            body.appendLittleEndian(UInt16(clamping: properties.userProperties.count))
            for pair in properties.userProperties.prefix(Int(UInt16.max)) {
                body.appendShortBytes(Array(pair.name.utf8))
                body.appendShortBytes(Array(pair.value.utf8))
            }
        }
        body.appendLittleEndian(UInt32(record.message.payload.count))
        body.append(contentsOf: record.message.payload)

        var bytes: [UInt8] = []
        bytes.reserveCapacity(headerSize + body.count)
        bytes.appendLittleEndian(UInt32(body.count))
        bytes.appendLittleEndian(CRC32.checksum(body))
        bytes.append(contentsOf: body)
        return bytes
    }

    /// Reads the record header at the start of `bytes`: the body length, or `truncated` when fewer than eight
    /// bytes are there.
    package static func bodyLength(header bytes: ArraySlice<UInt8>) throws(DecodeError) -> Int {
        var reader = ByteReader(bytes)
        return Int(try reader.read(UInt32.self))
    }

    /// The record that starts at `offset` of a segment file and its size, nil when what is there is not a
    /// whole record (a torn tail after a crash, or corruption): recovery keeps the segment up to that offset.
    package static func wholeRecord(in bytes: [UInt8], at offset: Int) -> (value: SpooledRecord, size: Int)? {
        guard let length = try? bodyLength(header: bytes[offset...]) else { return nil }
        let size = headerSize + length
        guard size <= bytes.count - offset, let record = try? decode(bytes[offset..<(offset + size)]) else { return nil }
        return (record, size)
    }

    /// Decodes one whole record (header and body).
    package static func decode(_ bytes: ArraySlice<UInt8>) throws(DecodeError) -> SpooledRecord {
        var reader = ByteReader(bytes)
        let length = Int(try reader.read(UInt32.self))
        let checksum = try reader.read(UInt32.self)
        let body = try reader.take(length)
        guard CRC32.checksum(body) == checksum else { throw .checksumMismatch }

        var fields = ByteReader(body)
        let sequence = try fields.read(UInt64.self)
        let enqueuedAt = try fields.read(UInt64.self)
        guard let qos = QoS(rawValue: Int(try fields.read(UInt8.self))) else { throw .malformed("qos") }
        // Bits this version does not write mean a record it cannot read as written: refused, not half-read.
        let flags = try fields.read(UInt8.self)
        guard flags <= 1 else { throw .malformed("flags") }
        let retain = flags == 1
        let topic = try fields.readShortString()
        let presence = try fields.read(UInt8.self)
        guard presence < 32 else { throw .malformed("property presence") }
        var properties = MQTTProperties()
        if presence & 1 != 0 { properties.responseTopic = try fields.readShortString() }
        if presence & 2 != 0 { properties.correlationData = Array(try fields.readShortBytes()) }
        if presence & 4 != 0 { properties.contentType = try fields.readShortString() }
        if presence & 8 != 0 { properties.messageExpiryInterval = try fields.read(UInt32.self) }
        if presence & 16 != 0 {
            let count = Int(try fields.read(UInt16.self))
            guard count > 0 else { throw .malformed("user properties") }
            for _ in 0..<count {
                properties.userProperties.append((try fields.readShortString(), try fields.readShortString()))
            }
        }
        let payloadLength = Int(try fields.read(UInt32.self))
        let payload = Array(try fields.take(payloadLength))
        guard fields.isAtEnd else { throw .malformed("trailing bytes") }
        return SpooledRecord(
            sequence: sequence, enqueuedAtMilliseconds: enqueuedAt,
            message: OutgoingMessage(topic: topic, payload: payload, qos: qos, retain: retain, properties: properties)
        )
    }
}

private struct ByteReader {
    private var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    var isAtEnd: Bool { bytes.isEmpty }

    mutating func take(_ count: Int) throws(SpoolRecordCodec.DecodeError) -> ArraySlice<UInt8> {
        guard count >= 0, bytes.count >= count else { throw .truncated }
        let taken = bytes.prefix(count)
        bytes = bytes.dropFirst(count)
        return taken
    }

    mutating func read<T: FixedWidthInteger & UnsignedInteger>(_: T.Type) throws(SpoolRecordCodec.DecodeError) -> T {
        let raw = try take(MemoryLayout<T>.size)
        var value: T = 0
        for (shift, byte) in raw.enumerated() { value |= T(byte) << (8 * shift) }
        return value
    }

    mutating func readShortBytes() throws(SpoolRecordCodec.DecodeError) -> ArraySlice<UInt8> {
        try take(Int(try read(UInt16.self)))
    }

    mutating func readShortString() throws(SpoolRecordCodec.DecodeError) -> String {
        let raw = try readShortBytes()
        guard let text = String(validating: raw, as: UTF8.self) else { throw .malformed("string is not UTF-8") }
        return text
    }
}

extension Array where Element == UInt8 {
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        for shift in 0..<MemoryLayout<T>.size { append(UInt8(truncatingIfNeeded: value >> (8 * shift))) }
    }

    mutating func appendShortBytes(_ bytes: [UInt8]) {
        let clipped = bytes.prefix(Int(UInt16.max))
        appendLittleEndian(UInt16(clipped.count))
        append(contentsOf: clipped)
    }
}
