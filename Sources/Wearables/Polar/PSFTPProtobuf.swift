import SwiftProtobuf

/// The one place PSFTP's protobuf messages meet `GATTCodecError`, so every H10 decoder refuses bad bytes the same
/// way: bytes that end inside a field are `truncated` (swift-protobuf does not say how many it wanted, so
/// `expected` is one more than there was); a message without one of its `required` fields, or bytes that are not
/// protobuf at all (a field number 0, an unknown wire type, an over-long varint, a group), are `outOfRange` with
/// the message's name and the length. Fields the schema does not know are skipped, as protobuf does.
enum PSFTPProtobuf {
    static func decode<Message: SwiftProtobuf.Message>(_: Message.Type, _ bytes: [UInt8]) throws(GATTCodecError) -> Message {
        do {
            return try Message(serializedBytes: bytes)
        } catch BinaryDecodingError.truncated {
            throw .truncated(expected: bytes.count + 1, actual: bytes.count)
        } catch BinaryDecodingError.missingRequiredFields {
            throw .outOfRange(field: "\(Message.protoMessageName) without a required field, length", value: bytes.count)
        } catch {
            throw .outOfRange(field: "\(Message.protoMessageName) protobuf, length", value: bytes.count)
        }
    }

    /// Serializing cannot fail for the messages built here: every builder sets the required fields, and none has a
    /// map or `Any`. Should that ever change, the empty result fails the round-trip tests rather than trapping.
    static func encode(_ message: some SwiftProtobuf.Message) -> [UInt8] {
        (try? message.serializedBytes() as [UInt8]) ?? []
    }
}
