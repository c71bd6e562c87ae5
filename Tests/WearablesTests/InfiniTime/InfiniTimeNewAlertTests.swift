import Testing

@testable import Wearables

@Suite("InfiniTime new alert and call response")
struct InfiniTimeNewAlertTests {
    /// `InfiniTimeOrg/InfiniTime` `doc/ble.md`, "New Alert": itd's `"\x00\x01\x00Test Title\x00Test Body"`.
    static let itdSimpleAlert: [UInt8] = [0x00, 0x01, 0x00] + Array("Test Title".utf8) + [0x00] + Array("Test Body".utf8)
    /// Same place: a call, `"\x03\x01\x00Mary"` — the caller, no title.
    static let itdCall: [UInt8] = [0x03, 0x01, 0x00] + Array("Mary".utf8)

    @Test("itd's simple alert from doc/ble.md: category 0, one alert, title, NUL, body")
    func simpleAlert() throws {
        let alert = try InfiniTimeNewAlert(category: .simpleAlert, title: "Test Title", body: "Test Body")
        #expect(alert.encode() == Self.itdSimpleAlert)
        #expect(try InfiniTimeNewAlert.decode(Self.itdSimpleAlert) == alert)
    }

    @Test("itd's call from doc/ble.md: category 3 and the caller as the body without a title")
    func call() throws {
        let call = try InfiniTimeNewAlert(category: .call, title: nil, body: "Mary")
        #expect(call.encode() == Self.itdCall)
        let decoded = try InfiniTimeNewAlert.decode(Self.itdCall)
        #expect(decoded.category == .call && decoded.title == nil && decoded.body == "Mary")
    }

    @Test("categories are the doc's list: 0 simple alert … 9 instant message, 0xFF all")
    func categories() {
        #expect(InfiniTimeAlertCategory.allCases.map(\.rawValue) == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0xFF])
    }

    @Test("a long body is cut between characters to the 99 text bytes the firmware keeps, ending with ...")
    func longBody() throws {
        // Each "é" is two bytes, so 99 bytes would split one; the cut falls before it.
        let body = String(repeating: "é", count: 80)
        let alert = try InfiniTimeNewAlert(category: .email, title: "Mail", body: body)
        let bytes = alert.encode()
        #expect(bytes.count - InfiniTimeNewAlert.headerByteCount <= 99)
        #expect(alert.title == "Mail")
        #expect(alert.body.hasSuffix("...") && alert.body.dropLast(3).allSatisfy { $0 == "é" })
        #expect(alert.body.utf8.count == 99 - 5 - 1 || alert.body.utf8.count == 99 - 5 - 2)
        #expect(try InfiniTimeNewAlert.decode(bytes) == alert)
    }

    @Test("a long title keeps 49 bytes when the body needs the room; a short title is kept whole")
    func longTitle() throws {
        let title = String(repeating: "T", count: 120)
        let body = String(repeating: "b", count: 120)
        let alert = try InfiniTimeNewAlert(category: .news, title: title, body: body)
        #expect(alert.title == String(repeating: "T", count: 46) + "...")
        #expect(alert.body.utf8.count == 99 - 49 - 1)
        let short = try InfiniTimeNewAlert(category: .news, title: "Doorbell", body: body)
        #expect(short.title == "Doorbell" && short.body.utf8.count == 99 - 8 - 1)
    }

    @Test("the firmware's reading: text past 99 bytes dropped, the body ends at a second NUL, NUL in input dropped")
    func firmwareReading() throws {
        let long = [0x00, 0x01, 0x00] + Array(repeating: UInt8(ascii: "x"), count: 150)
        #expect(try InfiniTimeNewAlert.decode(long).body == String(repeating: "x", count: 99))
        let twoSeparators = [0x00, 0x01, 0x00] + Array("t\0b\0c".utf8)
        let decoded = try InfiniTimeNewAlert.decode(twoSeparators)
        #expect(decoded.title == "t" && decoded.body == "b")
        let cleaned = try InfiniTimeNewAlert(category: .simpleAlert, title: "a\0b", body: "c\0d")
        #expect(cleaned.title == "ab" && cleaned.body == "cd")
    }

    @Test("no text at all is refused: the firmware ignores a write of 3 bytes or fewer")
    func empty() throws {
        #expect(throws: GATTCodecError.outOfRange(field: "notification text length", value: 0)) {
            try InfiniTimeNewAlert(category: .simpleAlert, title: nil, body: "\0")
        }
        #expect(throws: GATTCodecError.truncated(expected: 4, actual: 3)) { try InfiniTimeNewAlert.decode([0, 1, 0]) }
        // An empty title still sends its separator, which the watch shows as an empty heading.
        #expect(try InfiniTimeNewAlert(category: .simpleAlert, title: "", body: "").encode() == [0, 1, 0, 0])
    }

    @Test("an unlisted category or text that is not UTF-8 is refused")
    func refused() {
        #expect(throws: GATTCodecError.unknownIdentifier(field: "alert category", value: 0x0A)) {
            try InfiniTimeNewAlert.decode([0x0A, 0x01, 0x00, 0x41])
        }
        #expect(throws: GATTCodecError.invalidUTF8) { try InfiniTimeNewAlert.decode([0x00, 0x01, 0x00, 0xC3]) }
    }

    @Test("call buttons from doc/ble.md, Notification Event: 0 declined, 1 accepted, 2 muted")
    func callResponse() throws {
        #expect(try InfiniTimeCallResponse.decode([0x00]) == .reject)
        #expect(try InfiniTimeCallResponse.decode([0x01]) == .answer)
        #expect(try InfiniTimeCallResponse.decode([0x02]) == .mute)
        #expect(throws: GATTCodecError.unknownIdentifier(field: "call response", value: 3)) {
            try InfiniTimeCallResponse.decode([0x03])
        }
        #expect(throws: GATTCodecError.truncated(expected: 1, actual: 0)) { try InfiniTimeCallResponse.decode([]) }
        #expect(throws: GATTCodecError.truncated(expected: 1, actual: 2)) { try InfiniTimeCallResponse.decode([1, 1]) }
    }
}
