
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
        member(name) { _ in }
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
        appendLiteral("null")
    }

    public mutating func bool(_ value: Bool) {
        appendLiteral(value ? "true" : "false")
    }

    public mutating func integer(_ value: some BinaryInteger) {
        let comma = needsComma
        appendThroughScratch { scratch in
            if comma { scratch.put(UInt8(ascii: ",")) }
            scratch.put(integer: value)
        }
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
    public mutating func field(_ name: StaticString, _ value: String) { key(name); string(value) }

    public mutating func field(_ name: StaticString, _ value: Int64) {
        member(name) { $0.put(integer: value) }
        needsComma = true
    }

    public mutating func field(_ name: StaticString, _ value: Int) {
        member(name) { $0.put(integer: value) }
        needsComma = true
    }

    public mutating func field(_ name: StaticString, _ value: Bool) {
        member(name) { $0.put(value ? "true" : "false") }
        needsComma = true
    }

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

    /// A literal value (`null`, `true`, `false`) with its comma, in one append.
    private mutating func appendLiteral(_ text: StaticString) {
        let comma = needsComma
        appendThroughScratch { scratch in
            if comma { scratch.put(UInt8(ascii: ",")) }
            scratch.put(text)
        }
        needsComma = true
    }

    /// The comma, `"name":`, and what `value` puts after it, in one append when the name needs no escaping, as names
    /// in code rarely do. Leaves `needsComma` to the caller.
    private mutating func member(_ name: StaticString, _ value: (inout Scratch) -> Void) {
        let comma = needsComma
        let plain = name.withUTF8Buffer { name in
            guard name.count <= Scratch.longestPlainKey, !name.contains(where: Self.needsEscape) else { return false }
            appendThroughScratch { scratch in
                if comma { scratch.put(UInt8(ascii: ",")) }
                scratch.put(UInt8(ascii: "\""))
                scratch.put(name)
                scratch.put(UInt8(ascii: "\""))
                scratch.put(UInt8(ascii: ":"))
                value(&scratch)
            }
            return true
        }
        if !plain {
            separate()
            name.withUTF8Buffer { appendQuoted($0) }
            bytes.append(UInt8(ascii: ":"))
            appendThroughScratch(value)
        }
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// Stack space a member's small pieces are written into before one `append` takes them all: every `append`
    /// checks the array's uniqueness and capacity, which on the sample path cost more than the bytes themselves.
    private struct Scratch {
        static let capacity = 96
        /// Room left for a comma, the key's quotes and colon, and the longest value put here (a sign and the 20
        /// digits of `UInt64.max`).
        static let longestPlainKey = capacity - 4 - 21
        let base: UnsafeMutablePointer<UInt8>
        private(set) var count = 0

        init(base: UnsafeMutablePointer<UInt8>) { self.base = base }

        mutating func put(_ byte: UInt8) {
            base[count] = byte
            count += 1
        }

        mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let source = bytes.baseAddress else { return }
            (base + count).update(from: source, count: bytes.count)
            count += bytes.count
        }

        mutating func put(_ text: StaticString) {
            text.withUTF8Buffer { put($0) }
        }

        mutating func put(integer value: some BinaryInteger) {
            if let signed = Int64(exactly: value) {
                if signed < 0 { put(UInt8(ascii: "-")) }
                put(digitsOf: signed.magnitude)
            } else {
                put(digitsOf: UInt64(value))  // above Int64.max
            }
        }

        /// Decimal digits, most significant first: counted, then written from the last one back.
        mutating func put(digitsOf value: UInt64) {
            var digits = 1
            var bound: UInt64 = 10
            while digits < 20, value >= bound {
                digits += 1
                bound &*= 10
            }
            var rest = value
            var index = count + digits
            repeat {
                index -= 1
                base[index] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest > 0
            count += digits
        }
    }

    private mutating func appendThroughScratch(_ write: (inout Scratch) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Scratch.capacity) { space in
            var scratch = Scratch(base: space.baseAddress!)
            write(&scratch)
            bytes.append(contentsOf: UnsafeBufferPointer(start: space.baseAddress, count: scratch.count))
        }
    }

    private mutating func appendQuoted(_ text: String) {
        var text = text
        text.withUTF8 { appendQuoted($0) }
    }

    private mutating func appendQuoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        var runStart = 0
        for (offset, byte) in utf8.enumerated() where Self.needsEscape(byte) {
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
