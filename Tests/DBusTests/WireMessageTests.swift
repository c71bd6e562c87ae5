import CDBus
@testable import DBus
import SimulatedWearables
import Testing

/// The signal socket's reader (issue 43): a message's length and header fields, and a lone byte-array change, read in
/// place from the bytes. The vectors are laid out by hand from the D-Bus specification's "Message Format" and
/// "Marshaling" sections, in both byte orders, and checked against libdbus — which must accept the same bytes and read
/// the same values — and messages marshalled by libdbus itself are read the same way libdbus reads them.
@Suite struct WireMessageTests {
    static let characteristic = "org.bluez.GattCharacteristic1"
    static let path = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0011"

    /// A PropertiesChanged signal, laid out by hand.
    static func propertiesChanged(bigEndian: Bool, value: [UInt8], invalidated: Bool = true, sender: String = ":1.7") -> [UInt8] {
        var body = WireWriter(bigEndian: bigEndian)
        body.string(characteristic)
        body.array(alignment: 8) { entries in
            entries.align(8)
            entries.string("Value")
            entries.signature("ay")
            entries.array(alignment: 1) { $0.bytes(value) }
        }
        if invalidated { body.array(alignment: 4) { _ in } }
        return WireWriter.message(bigEndian: bigEndian, type: 4, serial: 0x0102_0304, fields: [
            (1, "o", path), (2, "s", "org.freedesktop.DBus.Properties"), (3, "s", "PropertiesChanged"),
            (8, "g", invalidated ? "sa{sv}as" : "sa{sv}"), (7, "s", sender),
        ], body: body.bytes)
    }

    @Test(arguments: [false, true])
    func aHandLaidSignalReadsAsLibdbusReadsIt(bigEndian: Bool) throws {
        for invalidated in [true, false] {
            let bytes = Self.propertiesChanged(bigEndian: bigEndian, value: [0x06, 0x48, 0x01], invalidated: invalidated)
            bytes.withUnsafeBytes { raw in
                #expect(WireMessage.length(atStartOf: raw) == .success(bytes.count))
                guard let message = WireMessage(raw) else { Issue.record("not read"); return }
                #expect(message.isBigEndian == bigEndian)
                #expect(message.type == 4 && message.serial == 0x0102_0304 && message.bodyOffset % 8 == 0)
                #expect(Self.text(message.path) == Self.path)
                #expect(Self.text(message.interface) == "org.freedesktop.DBus.Properties")
                #expect(Self.text(message.member) == "PropertiesChanged")
                #expect(Self.text(message.sender) == ":1.7")
                guard let change = LoneByteArrayChange(message) else { Issue.record("no lone change"); return }
                #expect(Self.text(change.interface) == Self.characteristic)
                #expect(Self.text(change.property) == "Value")
                #expect(Array(change.value) == [0x06, 0x48, 0x01])
            }
            // libdbus takes the same bytes as a valid message, with the same fields and values.
            let parsed = try #require(Self.demarshal(bytes))
            defer { dbus_message_unref(parsed) }
            #expect(String(cString: dbus_message_get_path(parsed)) == Self.path)
            #expect(String(cString: dbus_message_get_sender(parsed)) == ":1.7")
            #expect(dbus_message_get_serial(parsed) == 0x0102_0304)
            let change = try #require(LoneByteArrayChange(parsed))
            #expect(Array(change.value) == [0x06, 0x48, 0x01])
        }
    }

    @Test func everyTruncationIsIncompleteNeverAMessage() {
        let bytes = Self.propertiesChanged(bigEndian: false, value: Array(0..<20))
        for count in 0..<bytes.count {
            bytes.withUnsafeBytes { raw in
                let prefix = UnsafeRawBufferPointer(rebasing: raw[0..<count])
                if count < WireMessage.fixedHeaderLength {
                    #expect(WireMessage.length(atStartOf: prefix) == nil)
                } else {
                    #expect(WireMessage.length(atStartOf: prefix) == .success(bytes.count))
                }
                #expect(WireMessage(prefix) == nil, "a message of \(count) of \(bytes.count) bytes")
            }
        }
    }

    @Test func aStreamThatIsNotDBusIsBroken() {
        var bytes = Self.propertiesChanged(bigEndian: false, value: [1])
        bytes[0] = UInt8(ascii: "x")
        bytes.withUnsafeBytes { #expect(WireMessage.length(atStartOf: $0) == .failure(.badEndianness(UInt8(ascii: "x")))) }
        bytes[0] = UInt8(ascii: "l")
        bytes[3] = 2
        bytes.withUnsafeBytes { #expect(WireMessage.length(atStartOf: $0) == .failure(.badVersion(2))) }
        bytes[3] = 1
        bytes.replaceSubrange(4..<8, with: [0xFF, 0xFF, 0xFF, 0x7F])
        bytes.withUnsafeBytes {
            guard case .failure(.tooLong)? = WireMessage.length(atStartOf: $0) else { Issue.record("a 2 GiB body"); return }
        }
    }

    /// Every single byte changed to random values, and random bytes: never a crash, and whenever this reader takes a
    /// header libdbus accepts, both read the same lone change (or both none).
    @Test func corruptedMessagesReadAsLibdbusReadsThemOrNotAtAll() {
        var generator = SimulationRandom(seed: 43)
        let original = Self.propertiesChanged(bigEndian: false, value: [9, 8, 7, 6])
        var bothAccepted = 0
        for round in 0..<6000 {
            var bytes = original
            if round % 3 == 2 {
                bytes = (0..<Int.random(in: 0..<200, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            } else {
                for _ in 0...round % 3 {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
            }
            let ours: [UInt8]?? = bytes.withUnsafeBytes { raw in
                guard case .success(let length)? = WireMessage.length(atStartOf: raw), length == raw.count,
                      let message = WireMessage(raw) else { return nil }
                return .some(LoneByteArrayChange(message).map { Array($0.value) })
            }
            guard let parsed = Self.demarshal(bytes) else { continue }
            defer { dbus_message_unref(parsed) }
            let theirs = LoneByteArrayChange(parsed).map { Array($0.value) }
            // A header this reader does not take (an unknown message type or header field, which the specification
            // lets a reader skip) goes to libdbus on the signal socket too: only what it takes must agree.
            guard let ours else { continue }
            bothAccepted += 1
            #expect(ours == theirs, "\(bytes)")
        }
        #expect(bothAccepted > 100)
    }

    /// Messages libdbus marshals (the random bodies of `PropertyValueWatchTests`, little-endian as libdbus writes on
    /// this machine) read as libdbus reads them.
    @Test func libdbusMessagesReadTheSame() throws {
        var generator = SimulationRandom(seed: 7)
        for _ in 0..<2000 {
            let body = PropertyValueWatchTests.randomBody(using: &generator)
            let message = try #require(PropertyValueWatchTests.message(body: body))
            defer { dbus_message_unref(message) }
            let theirs = LoneByteArrayChange(message).map { (Self.text($0.interface), Self.text($0.property), Array($0.value)) }
            let bytes = Self.marshal(message)
            bytes.withUnsafeBytes { raw in
                guard let wire = WireMessage(raw) else { Issue.record("libdbus's bytes not read: \(body)"); return }
                #expect(Self.text(wire.path) == PropertyValueWatchTests.path.rawValue)
                #expect(Self.text(wire.sender) == ":1.7")
                let ours = LoneByteArrayChange(wire).map { (Self.text($0.interface), Self.text($0.property), Array($0.value)) }
                #expect(ours?.0 == theirs?.0 && ours?.1 == theirs?.1 && ours?.2 == theirs?.2, "\(body)")
            }
        }
    }

    static func text(_ bytes: UnsafeRawBufferPointer?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

    static func demarshal(_ bytes: [UInt8]) -> OpaquePointer? {
        bytes.withUnsafeBytes { raw in
            raw.withMemoryRebound(to: CChar.self) { dbus_message_demarshal($0.baseAddress, Int32($0.count), nil) }
        }
    }

    static func marshal(_ message: OpaquePointer) -> [UInt8] {
        dbus_message_set_serial(message, 5)
        var marshalled: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(message, &marshalled, &length) != 0, let marshalled else { return [] }
        defer { dbus_free(marshalled) }
        return Array(UnsafeRawBufferPointer(start: marshalled, count: Int(length)))
    }
}

/// Lays out D-Bus data by the specification's marshalling rules, in either byte order (tests only).
struct WireWriter {
    let bigEndian: Bool
    var bytes: [UInt8] = []
    /// Where alignment counts from: the message's first byte (the body begins at a multiple of 8, so a body counts
    /// from its own start).
    init(bigEndian: Bool) { self.bigEndian = bigEndian }

    mutating func align(_ alignment: Int) { while bytes.count % alignment != 0 { bytes.append(0) } }
    mutating func byte(_ value: UInt8) { bytes.append(value) }
    mutating func bytes(_ values: [UInt8]) { bytes += values }
    mutating func uint32(_ value: UInt32) {
        align(4)
        let ordered = bigEndian ? value.bigEndian : value.littleEndian
        withUnsafeBytes(of: ordered) { bytes += $0 }
    }
    mutating func string(_ text: String) {
        uint32(UInt32(text.utf8.count))
        bytes += Array(text.utf8) + [0]
    }
    mutating func signature(_ text: String) {
        bytes.append(UInt8(text.utf8.count))
        bytes += Array(text.utf8) + [0]
    }
    /// An array: its length, the padding to its elements' alignment, and the elements `write` lays out.
    mutating func array(alignment: Int, _ write: (inout WireWriter) -> Void) {
        uint32(0)
        let lengthAt = bytes.count - 4
        align(alignment)
        let start = bytes.count
        write(&self)
        let length = UInt32(bytes.count - start)
        let ordered = bigEndian ? length.bigEndian : length.littleEndian
        withUnsafeBytes(of: ordered) { bytes.replaceSubrange(lengthAt..<lengthAt + 4, with: $0) }
    }

    /// A whole message: the fixed header, the header fields (code, one-character signature, string value), the body.
    static func message(bigEndian: Bool, type: UInt8, serial: UInt32, fields: [(UInt8, Character, String)], body: [UInt8]) -> [UInt8] {
        var writer = WireWriter(bigEndian: bigEndian)
        writer.bytes = [bigEndian ? UInt8(ascii: "B") : UInt8(ascii: "l"), type, 0, 1]
        writer.uint32(UInt32(body.count))
        writer.uint32(serial)
        writer.array(alignment: 8) { fieldArray in
            for (code, type, value) in fields {
                fieldArray.align(8)
                fieldArray.byte(code)
                fieldArray.signature(String(type))
                if type == "g" { fieldArray.signature(value) } else { fieldArray.string(value) }
            }
        }
        writer.align(8)
        return writer.bytes + body
    }
}
