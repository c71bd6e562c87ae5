/// How much JSON the gateway agrees to read from one MQTT message.
///
/// Checked before any work is done, so a 1 MiB payload costs a comparison, not a parse.
public struct JSONLimits: Sendable, Equatable {
    /// Largest accepted payload in bytes. Requests are small (the largest is a `settings` object), so the
    /// default of 64 KiB leaves room without letting one client make the gateway chew megabytes.
    public var maximumBytes: Int
    /// Deepest accepted nesting of arrays and objects. The parser recurses once per level, so this also
    /// bounds its stack.
    public var maximumDepth: Int

    public init(maximumBytes: Int = 64 * 1024, maximumDepth: Int = 64) {
        self.maximumBytes = maximumBytes
        self.maximumDepth = maximumDepth
    }

    /// The limits applied to every request on `…/request/…`, `…/set` and `…/get`.
    public static let requests = JSONLimits()
}

/// Why a payload is not acceptable JSON. The description is a sentence for the person who sent it.
public enum JSONParsingError: Error, Sendable, Equatable, CustomStringConvertible {
    case tooLarge(bytes: Int, limit: Int)
    case invalidUTF8
    case tooDeep(limit: Int)
    /// The text is not JSON; `offset` is the byte where reading stopped.
    case syntax(String, offset: Int)
    case duplicateKey(String)
    /// A number too large for a Double (`1e400`).
    case numberOutOfRange(String)

    public var description: String {
        switch self {
        case .tooLarge(let bytes, let limit):
            "payload is \(bytes) bytes; requests may be at most \(limit) bytes"
        case .invalidUTF8:
            "payload is not valid UTF-8"
        case .tooDeep(let limit):
            "payload nests arrays or objects deeper than \(limit) levels"
        case .syntax(let problem, let offset):
            "payload is not valid JSON: \(problem) at byte \(offset)"
        case .duplicateKey(let key):
            "payload is ambiguous: key \"\(key)\" appears twice in one object"
        case .numberOutOfRange(let literal):
            "payload has a number out of range: \(literal.prefix(32))"
        }
    }
}

/// A strict RFC 8259 parser into `DeviceValue`, the device model's JSON-shaped value.
///
/// Rules, chosen so that a request means exactly one thing:
/// - the size limit is checked first, then the whole payload must be UTF-8, then it is parsed;
/// - one value with optional whitespace around it; no comments, trailing commas, single quotes, `NaN`,
///   leading `+` or zeros, or a byte-order mark;
/// - a key repeated in one object is an error (not last-wins): `{"vibrations":1,"vibrations":10}` is refused;
/// - a number written without fraction or exponent that fits `Int64` becomes `.integer`, every other number
///   `.number(Double)` (so `3` is an integer, `3.0` and `1e3` are doubles; `DeviceValue.integer` still
///   accepts integral doubles); a number beyond Double's range is an error, never infinity;
/// - `\u` escapes must form valid scalars: a lone surrogate is an error.
///
/// It does not keep object key order (`DeviceValue.object` is a dictionary) and does not stream.
public enum JSONParser {
    public static func parse(_ bytes: [UInt8], limits: JSONLimits = .requests) throws(JSONParsingError) -> DeviceValue {
        guard bytes.count <= limits.maximumBytes else {
            throw .tooLarge(bytes: bytes.count, limit: limits.maximumBytes)
        }
        guard String(validating: bytes, as: UTF8.self) != nil else { throw .invalidUTF8 }
        var reader = Reader(bytes: bytes, maximumDepth: limits.maximumDepth)
        reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.index == bytes.count else {
            throw reader.syntax("unexpected \(reader.describeCurrent()) after the JSON value")
        }
        return value
    }
}

private struct Reader {
    let bytes: [UInt8]
    let maximumDepth: Int
    var index = 0

    init(bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    func syntax(_ problem: String) -> JSONParsingError { .syntax(problem, offset: index) }

    func describeCurrent() -> String {
        guard index < bytes.count else { return "end of payload" }
        let byte = bytes[index]
        if byte >= 0x21 && byte < 0x7F { return "character '\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func value(depth: Int) throws(JSONParsingError) -> DeviceValue {
        guard index < bytes.count else { throw syntax("expected a value but found the end of payload") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .text(try string())
        case UInt8(ascii: "t"): try literal("true"); return .flag(true)
        case UInt8(ascii: "f"): try literal("false"); return .flag(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw syntax("expected a value but found \(describeCurrent())")
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONParsingError) {
        let count = word.utf8CodeUnitCount
        let matches = word.withUTF8Buffer { expected in
            index + count <= bytes.count && bytes[index..<index + count].elementsEqual(expected)
        }
        guard matches else { throw syntax("expected a value but found \(describeCurrent())") }
        index += count
    }

    mutating func object(depth: Int) throws(JSONParsingError) -> DeviceValue {
        guard depth <= maximumDepth else { throw .tooDeep(limit: maximumDepth) }
        index += 1  // {
        var members: [String: DeviceValue] = [:]
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw syntax("expected a quoted key but found \(describeCurrent())")
            }
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw syntax("expected ':' after key \"\(key)\" but found \(describeCurrent())")
            }
            index += 1
            skipWhitespace()
            let member = try value(depth: depth)
            if members.updateValue(member, forKey: key) != nil { throw .duplicateKey(key) }
            skipWhitespace()
            guard index < bytes.count else { throw syntax("object is not closed: expected ',' or '}'") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(members)
            default: throw syntax("expected ',' or '}' but found \(describeCurrent())")
            }
        }
    }

    mutating func array(depth: Int) throws(JSONParsingError) -> DeviceValue {
        guard depth <= maximumDepth else { throw .tooDeep(limit: maximumDepth) }
        index += 1  // [
        var elements: [DeviceValue] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .list(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try value(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw syntax("array is not closed: expected ',' or ']'") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .list(elements)
            default: throw syntax("expected ',' or ']' but found \(describeCurrent())")
            }
        }
    }

    /// Reads a string starting at its opening quote. The payload is already known to be UTF-8, so raw bytes
    /// between escapes are copied as they are.
    mutating func string() throws(JSONParsingError) -> String {
        index += 1  // "
        let start = index
        // Fast path: no escapes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                defer { index += 1 }
                return String(decoding: bytes[start..<index], as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw syntax("control character in a string must be escaped") }
            index += 1
        }
        var decoded = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: decoded, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                try escape(into: &decoded)
            case 0..<0x20:
                throw syntax("control character in a string must be escaped")
            default:
                decoded.append(byte)
                index += 1
            }
        }
        throw syntax("string is not closed")
    }

    mutating func escape(into decoded: inout [UInt8]) throws(JSONParsingError) {
        guard index < bytes.count else { throw syntax("string is not closed") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): decoded.append(0x22)
        case UInt8(ascii: "\\"): decoded.append(0x5C)
        case UInt8(ascii: "/"): decoded.append(0x2F)
        case UInt8(ascii: "b"): decoded.append(0x08)
        case UInt8(ascii: "f"): decoded.append(0x0C)
        case UInt8(ascii: "n"): decoded.append(0x0A)
        case UInt8(ascii: "r"): decoded.append(0x0D)
        case UInt8(ascii: "t"): decoded.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try hexQuad())
            if (0xD800...0xDBFF).contains(scalar) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else { throw syntax("\\u escape is a lone high surrogate") }
                index += 2
                let low = UInt32(try hexQuad())
                guard (0xDC00...0xDFFF).contains(low) else { throw syntax("\\u escape is a lone high surrogate") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw syntax("\\u escape is a lone low surrogate")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw syntax("\\u escape is not a Unicode scalar") }
            decoded.append(contentsOf: UTF8.encode(unicode)!)
        default:
            index -= 1
            throw syntax("unknown escape: backslash followed by \(describeCurrent())")
        }
    }

    mutating func hexQuad() throws(JSONParsingError) -> UInt16 {
        guard index + 4 <= bytes.count else { throw syntax("\\u escape needs four hex digits") }
        var result: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw syntax("\\u escape needs four hex digits")
            }
            result = result << 4 | UInt16(digit)
            index += 1
        }
        return result
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    mutating func number() throws(JSONParsingError) -> DeviceValue {
        let start = index
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else {
            throw syntax("expected a digit after '-' but found \(describeCurrent())")
        }
        // Accumulate negatively so that Int64.min fits; nil once it overflows.
        var accumulator: Int64? = 0
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw syntax("numbers may not have leading zeros") }
        } else {
            while index < bytes.count, isDigit(bytes[index]) {
                if let current = accumulator {
                    let (shifted, overflow1) = current.multipliedReportingOverflow(by: 10)
                    let (next, overflow2) = shifted.subtractingReportingOverflow(Int64(bytes[index] - UInt8(ascii: "0")))
                    accumulator = overflow1 || overflow2 ? nil : next
                }
                index += 1
            }
        }
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw syntax("expected a digit after '.' but found \(describeCurrent())")
            }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw syntax("expected a digit in the exponent but found \(describeCurrent())")
            }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if isInteger, let magnitude = accumulator {
            if negative { return .integer(magnitude) }
            if magnitude != .min { return .integer(-magnitude) }
        }
        let literal = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let double = Double(literal), double.isFinite else { throw .numberOutOfRange(literal) }
        return .number(double)
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
