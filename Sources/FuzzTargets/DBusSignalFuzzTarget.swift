import CDBus
import DBus

extension FuzzTarget {
    /// The signal socket's reader (issue 43): the input as a stream of messages framed by their fixed headers, each
    /// header's fields, and each lone byte-array change read in place; the input also goes in as the body of a valid
    /// PropertiesChanged header, so the body's reader is reached without the fuzzer forging a header. Whatever this
    /// reader takes that libdbus accepts too, libdbus must read the same way.
    static let dbusSignal = FuzzTarget(
        name: "dbus-signal",
        summary: "D-Bus messages as the signal socket reads them: framing, header fields, PropertiesChanged bodies"
    ) { bytes in
        var offset = 0
        while offset < bytes.count {
            let length: Int? = bytes.withUnsafeBytes { raw in
                guard case .success(let length)? = WireMessage.length(atStartOf: UnsafeRawBufferPointer(rebasing: raw[offset...]))
                else { return nil }
                return length
            }
            guard let length, length >= WireMessage.fixedHeaderLength, offset + length <= bytes.count else { break }
            checkSignal(Array(bytes[offset..<offset + length]))
            offset += length
        }
        checkSignal(propertiesChangedHeader(bodyLength: bytes.count) + bytes)
    }

    /// Reads `message` as the signal socket does and checks it against libdbus.
    private static func checkSignal(_ message: [UInt8]) {
        let ours: [UInt8]?? = message.withUnsafeBytes { raw in
            guard let wire = WireMessage(raw) else { return nil }
            precondition(wire.bodyOffset <= raw.count && wire.bodyOffset % 8 == 0, "the body begins outside the message")
            for field in [wire.path, wire.interface, wire.member, wire.sender, wire.signature, wire.errorName] {
                if let field { precondition(inside(field, raw), "a header field outside the message") }
            }
            guard let change = LoneByteArrayChange(wire) else { return .some(nil) }
            precondition(inside(change.value, raw) && inside(change.property, raw) && inside(change.interface, raw),
                         "a change read outside the message")
            return .some(Array(change.value))
        }
        guard let ours else { return }
        let parsed = message.withUnsafeBytes { raw in
            raw.withMemoryRebound(to: CChar.self) { dbus_message_demarshal($0.baseAddress, Int32($0.count), nil) }
        }
        guard let parsed else { return }
        defer { dbus_message_unref(parsed) }
        precondition(LoneByteArrayChange(parsed).map { Array($0.value) } == ours, "libdbus reads another change")
    }

    private static func inside(_ part: UnsafeRawBufferPointer, _ whole: UnsafeRawBufferPointer) -> Bool {
        part.isEmpty || (part.baseAddress! >= whole.baseAddress! && part.baseAddress! + part.count <= whole.baseAddress! + whole.count)
    }

    /// A little-endian signal header: path, interface, member, signature `sa{sv}as`, sender; padded to 8.
    private static func propertiesChangedHeader(bodyLength: Int) -> [UInt8] {
        var fields: [UInt8] = []
        func field(_ code: UInt8, _ type: Character, _ value: String) {
            while fields.count % 8 != 0 { fields.append(0) }
            fields += [code, 1, UInt8(type.asciiValue!), 0]
            if type == "g" {
                fields += [UInt8(value.utf8.count)] + Array(value.utf8) + [0]
            } else {
                fields += littleEndian(UInt32(value.utf8.count)) + Array(value.utf8) + [0]
            }
        }
        field(1, "o", "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0011")
        field(2, "s", "org.freedesktop.DBus.Properties")
        field(3, "s", "PropertiesChanged")
        field(8, "g", "sa{sv}as")
        field(7, "s", ":1.7")
        var header: [UInt8] = [UInt8(ascii: "l"), 4, 0, 1] + littleEndian(UInt32(bodyLength)) + littleEndian(1)
            + littleEndian(UInt32(fields.count)) + fields
        while header.count % 8 != 0 { header.append(0) }
        return header
    }

    private static func littleEndian(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }
}
