@testable import MQTT
import Testing

@Suite struct SpoolRecordCodecTests {
    let record = SpooledRecord(
        sequence: 42, enqueuedAtMilliseconds: 1_763_000_000_123,
        message: OutgoingMessage(
            topic: "wear2mqtt/band/fitness/steps", payload: Array(#"{"id":"s-1","steps":120}"#.utf8),
            qos: .atLeastOnce, retain: false,
            properties: MQTTProperties(responseTopic: "r/t", correlationData: [0, 1, 255], contentType: "application/json",
                                       messageExpiryInterval: 3600, userProperties: [("k", "v"), ("k", "w")])))

    @Test func roundTripsEveryField() throws {
        let bytes = SpoolRecordCodec.encode(record)
        #expect(try SpoolRecordCodec.decode(bytes[...]) == record)
    }

    @Test func headerIsLengthThenCRCLittleEndian() {
        let bytes = SpoolRecordCodec.encode(record)
        let length = Int(bytes[0]) | Int(bytes[1]) << 8 | Int(bytes[2]) << 16 | Int(bytes[3]) << 24
        #expect(length == bytes.count - 8)
        let crc = UInt32(bytes[4]) | UInt32(bytes[5]) << 8 | UInt32(bytes[6]) << 16 | UInt32(bytes[7]) << 24
        #expect(crc == CRC32.checksum(bytes[8...]))
    }

    @Test func crc32MatchesZlibCheckValue() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
    }

    @Test func everyTruncationIsATypedError() {
        let bytes = SpoolRecordCodec.encode(record)
        for cut in 0..<bytes.count {
            #expect(throws: SpoolRecordCodec.DecodeError.self) { try SpoolRecordCodec.decode(bytes[..<cut]) }
        }
    }

    /// Body bytes with a valid CRC, as `SpoolRecordCodec.encode` frames them.
    static func framed(_ body: [UInt8]) -> [UInt8] {
        let length = UInt32(body.count), crc = CRC32.checksum(body)
        return (0..<4).map { UInt8(truncatingIfNeeded: length >> (8 * $0)) } + (0..<4).map { UInt8(truncatingIfNeeded: crc >> (8 * $0)) } + body
    }

    /// The fuzzer's find (Tests/fuzz/corpus/spool/spool-crash-e29b…): flag bits this version never writes were
    /// dropped on reading, so the record read back was not the one on disk. Now such a record is refused whole.
    @Test func flagAndPresenceBitsThisVersionDoesNotWriteAreRefused() {
        var body = Array(SpoolRecordCodec.encode(record).dropFirst(8))
        body[17] = 0x74
        #expect(throws: SpoolRecordCodec.DecodeError.malformed("flags")) { try SpoolRecordCodec.decode(Self.framed(body)[...]) }
        body[17] = 0x01
        let presence = 18 + 2 + record.message.topic.utf8.count
        body[presence] |= 0x20
        #expect(throws: SpoolRecordCodec.DecodeError.malformed("property presence")) {
            try SpoolRecordCodec.decode(Self.framed(body)[...])
        }
    }

    /// The fuzzer's second find (spool-crash-af77…): user properties marked present with a count of 0 read as
    /// none, and were written back unmarked.
    @Test func userPropertiesMarkedPresentButNoneAreRefused() {
        let bare = SpooledRecord(sequence: 1, enqueuedAtMilliseconds: 2,
                                 message: OutgoingMessage(topic: "t", payload: [], qos: .atMostOnce, retain: false))
        var body = Array(SpoolRecordCodec.encode(bare).dropFirst(8))
        let presence = 18 + 2 + 1
        body[presence] = 16
        body.insert(contentsOf: [0, 0], at: presence + 1)
        #expect(throws: SpoolRecordCodec.DecodeError.malformed("user properties")) {
            try SpoolRecordCodec.decode(Self.framed(body)[...])
        }
    }

    @Test func aFlippedBitFailsTheChecksum() {
        var bytes = SpoolRecordCodec.encode(record)
        bytes[bytes.count - 3] ^= 0x10
        #expect(throws: SpoolRecordCodec.DecodeError.checksumMismatch) { try SpoolRecordCodec.decode(bytes[...]) }
    }

    @Test func anUnknownQoSIsMalformed() {
        var body = Array(SpoolRecordCodec.encode(record).dropFirst(8))
        body[16] = 7
        var bytes: [UInt8] = []
        bytes.appendLittleEndian(UInt32(body.count))
        bytes.appendLittleEndian(CRC32.checksum(body))
        bytes += body
        #expect(throws: SpoolRecordCodec.DecodeError.malformed("qos")) { try SpoolRecordCodec.decode(bytes[...]) }
    }
}
