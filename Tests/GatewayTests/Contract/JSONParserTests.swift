import Testing
import Wearables

@testable import Gateway

private func parse(_ text: String, limits: JSONLimits = .requests) throws(JSONParsingError) -> DeviceValue {
    try JSONParser.parse(Array(text.utf8), limits: limits)
}

private func parseError(_ text: String, limits: JSONLimits = .requests) -> JSONParsingError? {
    parseError(Array(text.utf8), limits: limits)
}

private func parseError(_ bytes: [UInt8], limits: JSONLimits = .requests) -> JSONParsingError? {
    do {
        _ = try JSONParser.parse(bytes, limits: limits)
        return nil
    } catch {
        return error
    }
}

@Suite("JSON parser: strict RFC 8259 into DeviceValue")
struct JSONParserTests {
    @Test("an object with every kind of value")
    func everyKind() throws {
        let value = try parse(#" {"a":1,"b":-2.5,"c":"x","d":true,"e":false,"f":null,"g":[1,[]],"h":{}} "#)
        #expect(value == .object([
            "a": .integer(1), "b": .number(-2.5), "c": .text("x"), "d": .flag(true), "e": .flag(false), "f": .null,
            "g": .list([.integer(1), .list([])]), "h": .object([:]),
        ]))
    }

    @Test("a number without fraction or exponent that fits Int64 is an integer; all others are doubles")
    func numberKinds() throws {
        #expect(try parse("3") == .integer(3))
        #expect(try parse("-0") == .integer(0))
        #expect(try parse("9223372036854775807") == .integer(.max))
        #expect(try parse("-9223372036854775808") == .integer(.min))
        #expect(try parse("9223372036854775808") == .number(9_223_372_036_854_775_808.0))
        #expect(try parse("-9223372036854775809") == .number(-9_223_372_036_854_775_809.0))
        #expect(try parse("3.0") == .number(3.0))
        #expect(try parse("1e3") == .number(1000))
        #expect(try parse("1E-2") == .number(0.01))
        #expect(try parse("-0.5e+1") == .number(-5))
        #expect(try parse("0.1") == .number(0.1))
    }

    @Test("a number beyond Double's range is an error, never infinity")
    func numberOutOfRange() {
        #expect(parseError("1e400") == .numberOutOfRange("1e400"))
        #expect(parseError("[-1e999]") == .numberOutOfRange("-1e999"))
    }

    @Test("escapes, including surrogate pairs, decode to the characters they name")
    func escapes() throws {
        #expect(try parse(#""a\"b\\c\/d\b\f\n\r\t""#) == .text("a\"b\\c/d\u{8}\u{C}\n\r\t"))
        #expect(try parse(#""\u00e9\u20AC\ud83c\udfa7""#) == .text("é€🎧"))
        #expect(try parse(#""\u0000""#) == .text("\u{0}"))
        #expect(try parse("\"héllo 🎧\"") == .text("héllo 🎧"))
    }

    @Test("a repeated key is refused rather than last-wins")
    func duplicateKey() {
        #expect(parseError(#"{"vibrations":1,"vibrations":10}"#) == .duplicateKey("vibrations"))
        #expect(parseError(#"{"a":{"b":1,"b":1}}"#) == .duplicateKey("b"))
    }

    @Test("the size limit is checked before anything else: 1 MiB of garbage is refused as too large")
    func sizeLimit() {
        let huge = [UInt8](repeating: 0xFF, count: 1 << 20)
        #expect(parseError(huge) == .tooLarge(bytes: 1 << 20, limit: 65_536))
        #expect(parseError("[1,2]", limits: JSONLimits(maximumBytes: 4)) == .tooLarge(bytes: 5, limit: 4))
        #expect((try? parse("[1,2]", limits: JSONLimits(maximumBytes: 5))) == .list([1, 2]))
    }

    @Test("nesting is limited: 64 levels parse, 65 do not")
    func depthLimit() throws {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        _ = try parse(ok)
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(parseError(deep) == .tooDeep(limit: 64))
        let deepObjects = String(repeating: #"{"a":"#, count: 65) + "1" + String(repeating: "}", count: 65)
        #expect(parseError(deepObjects) == .tooDeep(limit: 64))
        // Far deeper than the stack would allow with unbounded recursion.
        let hostile = String(repeating: "[", count: 60_000)
        #expect(parseError(hostile) == .tooDeep(limit: 64))
    }

    @Test("invalid UTF-8 is refused, inside or outside strings", arguments: [
        [0x22, 0xC3, 0x28, 0x22] as [UInt8],  // bad continuation byte
        [0x22, 0xED, 0xA0, 0x80, 0x22],  // encoded surrogate
        [0x22, 0xC0, 0xAF, 0x22],  // overlong "/"
        [0x7B, 0xFF, 0x7D],
    ])
    func invalidUTF8(bytes: [UInt8]) {
        #expect(parseError(bytes) == .invalidUTF8)
    }

    @Test("syntax errors name what went wrong and where", arguments: [
        ("", "expected a value but found the end of payload at byte 0"),
        ("hello", "expected a value but found character 'h' at byte 0"),
        ("{\"a\":1,}", "expected a quoted key but found character '}' at byte 7"),
        ("[1,]", "expected a value but found character ']' at byte 3"),
        ("{'a':1}", "expected a quoted key but found character ''' at byte 1"),
        ("{\"a\" 1}", "expected ':' after key \"a\" but found character '1' at byte 5"),
        ("{\"a\":1", "object is not closed: expected ',' or '}' at byte 6"),
        ("[1 2]", "expected ',' or ']' but found character '2' at byte 3"),
        ("{} {}", "unexpected character '{' after the JSON value at byte 3"),
        ("01", "numbers may not have leading zeros at byte 1"),
        ("+1", "expected a value but found character '+' at byte 0"),
        ("-", "expected a digit after '-' but found end of payload at byte 1"),
        ("1.", "expected a digit after '.' but found end of payload at byte 2"),
        ("1e", "expected a digit in the exponent but found end of payload at byte 2"),
        (".5", "expected a value but found character '.' at byte 0"),
        ("NaN", "expected a value but found character 'N' at byte 0"),
        ("nul", "expected a value but found character 'n' at byte 0"),
        ("\"abc", "string is not closed at byte 4"),
        ("\"a\nb\"", "control character in a string must be escaped at byte 2"),
        ("\"\\x\"", "unknown escape: backslash followed by character 'x' at byte 2"),
        ("\"\\u12G4\"", "\\u escape needs four hex digits at byte 5"),
        ("\"\\ud83c\"", "\\u escape is a lone high surrogate at byte 7"),
        ("\"\\udfa7\"", "\\u escape is a lone low surrogate at byte 7"),
        ("\u{FEFF}{}", "expected a value but found byte 0xEF at byte 0"),
        ("/* c */ {}", "expected a value but found character '/' at byte 0"),
    ])
    func syntaxErrors(text: String, expected: String) {
        let error = parseError(text)
        #expect(error?.description == "payload is not valid JSON: \(expected)")
    }
}
