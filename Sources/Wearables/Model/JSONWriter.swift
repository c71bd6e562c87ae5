
/// Writes JSON into one growing byte buffer, the payload an `OutgoingMessage` carries.
///
/// It sits on the sample path (bytes → sample → JSON → publish), so it builds no intermediate tree, uses
/// neither `JSONSerialization` nor `Codable`, and writes keys in the order the caller gives them: the
/// contract's order for samples and other fixed shapes, sorted for generic objects (`value(_:)`).
///
/// Numbers:
/// - integers are written as plain digits (`42`, never `42.0`);
/// - doubles are written at full precision, as Swift's shortest representation that reads back to the same
///   value (`36.6`, `0.1`, `1e-05`, `1.5e+20`); no rounding. A double always carries a `.` or an exponent
///   (`37.0`), so a consumer that types fields by their first value (InfluxDB, pandas) never sees a float
///   field turn into an integer;
/// - NaN and ±infinity, which JSON cannot express, are written as `null`.
///
/// Strings escape `"`, `\` and control characters; everything else, `/` and non-ASCII included, is written
/// as UTF-8. Commas are placed automatically; the caller only opens and closes containers, names keys and
/// writes values. It does not check that containers are balanced.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8]
    private var needsComma = false

    public init(capacity: Int = 128) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Empties the buffer and keeps its storage. A writer its owner keeps writes each payload without allocating
    /// once the message holding the previous one is gone (until then, the next write copies: value semantics).
    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        needsComma = false
    }

    // MARK: Containers

    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Starts a member of the current object; the next value written is its value.
    public mutating func key(_ name: StaticString) {
        separate()
        name.withUTF8Buffer { appendQuoted($0) }
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    public mutating func key(_ name: String) {
        separate()
        appendQuoted(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    // MARK: Scalars

    public mutating func null() {
        separate()
        appendRaw("null")
        needsComma = true
    }

    public mutating func bool(_ value: Bool) {
        separate()
        appendRaw(value ? "true" : "false")
        needsComma = true
    }

    public mutating func integer(_ value: some BinaryInteger) {
        separate()
        appendDigits(of: value)
        needsComma = true
    }

    public mutating func number(_ value: Double) {
        guard value.isFinite else { return null() }
        separate()
        bytes.append(contentsOf: value.description.utf8)
        needsComma = true
    }

    public mutating func string(_ value: String) {
        separate()
        appendQuoted(value)
        needsComma = true
    }

    /// A device-model value; objects are written with their keys sorted so equal values give equal bytes.
    public mutating func value(_ value: DeviceValue) {
        switch value {
        case .null: null()
        case .flag(let flag): bool(flag)
        case .integer(let integer): self.integer(integer)
        case .number(let number): self.number(number)
        case .text(let text): string(text)
        case .list(let elements):
            beginArray()
            for element in elements { self.value(element) }
            endArray()
        case .object(let members):
            beginObject()
            for name in members.keys.sorted() {
                key(name)
                self.value(members[name]!)
            }
            endObject()
        }
    }

    /// The members of `members` in sorted key order, skipping `excluded` keys: the tail of an object whose
    /// first keys the contract fixes (`{"ts":…,"event":…, …details}`).
    public mutating func members(_ members: [String: DeviceValue], excluding excluded: Set<String> = []) {
        for name in members.keys.sorted() where !excluded.contains(name) {
            key(name)
            value(members[name]!)
        }
    }

    // MARK: Members in one call

    public mutating func field(_ name: StaticString, _ value: Double) { key(name); number(value) }
    public mutating func field(_ name: StaticString, _ value: Int64) { key(name); integer(value) }
    public mutating func field(_ name: StaticString, _ value: Int) { key(name); integer(value) }
    public mutating func field(_ name: StaticString, _ value: String) { key(name); string(value) }
    public mutating func field(_ name: StaticString, _ value: Bool) { key(name); bool(value) }

    /// Writes the member only when the value is present: the contract omits absent optionals.
    public mutating func optionalField(_ name: StaticString, _ value: Double?) { if let value { field(name, value) } }
    public mutating func optionalField(_ name: StaticString, _ value: Int?) { if let value { field(name, value) } }
    public mutating func optionalField(_ name: StaticString, _ value: Int64?) { if let value { field(name, value) } }
    public mutating func optionalField(_ name: StaticString, _ value: String?) { if let value { field(name, value) } }
    public mutating func optionalField(_ name: StaticString, _ value: Bool?) { if let value { field(name, value) } }

    // MARK: Bytes

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    private mutating func appendRaw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    private func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    private mutating func appendDigits(of value: some BinaryInteger) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = UInt64(value.magnitude)
        // Written from the last digit back into scratch space, then appended at once: an append per digit checks
        // the array's capacity and uniqueness every time (a millisecond timestamp has 13 digits).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in  // UInt64.max has 20 digits
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    private mutating func appendQuoted(_ text: String) {
        var text = text
        text.withUTF8 { appendQuoted($0) }
    }

    private mutating func appendQuoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        var runStart = 0
        for (offset, byte) in utf8.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<offset]))
            runStart = offset + 1
            bytes.append(UInt8(ascii: "\\"))
            switch byte {
            case 0x22: bytes.append(UInt8(ascii: "\""))
            case 0x5C: bytes.append(UInt8(ascii: "\\"))
            case 0x0A: bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "t"))
            case 0x08: bytes.append(UInt8(ascii: "b"))
            case 0x0C: bytes.append(UInt8(ascii: "f"))
            default:
                appendRaw("u00")
                bytes.append(hexDigit(byte >> 4))
                bytes.append(hexDigit(byte & 0xF))
            }
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        bytes.append(UInt8(ascii: "\""))
    }
}

extension JSONWriter {
    /// One device-model value as a complete JSON document.
    public static func encode(_ value: DeviceValue) -> [UInt8] {
        var writer = JSONWriter()
        writer.value(value)
        return writer.bytes
    }
}
