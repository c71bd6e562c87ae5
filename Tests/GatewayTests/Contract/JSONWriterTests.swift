import Testing
import Wearables

@testable import Gateway

private func written(_ value: DeviceValue) -> String {
    String(decoding: JSONWriter.encode(value), as: UTF8.self)
}

@Suite("JSON writer: one buffer, stable keys, full precision, no NaN")
struct JSONWriterTests {
    @Test("generic objects are written with sorted keys at every depth, arrays in order")
    func sortedKeys() {
        let value: DeviceValue = ["b": 1, "a": ["z": true, "y": nil], "c": [3, 1, 2]]
        #expect(written(value) == #"{"a":{"y":null,"z":true},"b":1,"c":[3,1,2]}"#)
    }

    @Test("integers print without .0, including the extremes")
    func integers() {
        #expect(written(.integer(0)) == "0")
        #expect(written(.integer(-42)) == "-42")
        #expect(written(.integer(.max)) == "9223372036854775807")
        #expect(written(.integer(.min)) == "-9223372036854775808")
        var writer = JSONWriter()
        writer.beginArray()
        writer.integer(UInt32.max)
        writer.integer(UInt16(7))
        writer.endArray()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "[4294967295,7]")
    }

    @Test("integers of every size read as their description, with the comma before them")
    func integersAgreeWithDescription() throws {
        var generator = SystemRandomNumberGenerator()
        var values: [Int64] = [0, 9, 10, 99, 100, -1, -10, .max, .min, .max - 1, .min + 1]
        for _ in 0..<2_000 { values.append(Int64.random(in: .min ... .max, using: &generator) >> Int64.random(in: 0...63, using: &generator)) }
        var writer = JSONWriter()
        writer.beginArray()
        for value in values { writer.integer(value) }
        writer.integer(UInt64.max)
        writer.endArray()
        let expected = "[" + (values.map(String.init) + [String(UInt64.max)]).joined(separator: ",") + "]"
        #expect(String(decoding: writer.bytes, as: UTF8.self) == expected)
    }

    @Test("keys named in code: escaped when they need it, whole when longer than the scratch space")
    func staticKeys() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("plain", 1)
        writer.field("quote\"and\\slash", 2)
        writer.field("a_key_that_is_much_longer_than_the_scratch_space_leaves_room_for_and_so_takes_the_other_path", true)
        writer.field("kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk", Int64.min)  // the longest key the scratch space takes, with the longest value
        writer.field("kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk", -1)
        writer.key("tab\t")
        writer.null()
        writer.endObject()
        #expect(String(decoding: writer.bytes, as: UTF8.self)
            == #"{"plain":1,"quote\"and\\slash":2,"a_key_that_is_much_longer_than_the_scratch_space_leaves_room_for_and_so_takes_the_other_path":true,"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk":-9223372036854775808,"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk":-1,"tab\t":null}"#)
    }

    @Test("doubles print at full precision, shortest round-trip, always with '.' or an exponent")
    func doubles() {
        #expect(written(.number(36.6)) == "36.6")
        #expect(written(.number(37)) == "37.0")
        #expect(written(.number(0.1)) == "0.1")
        #expect(written(.number(-0.0)) == "-0.0")
        #expect(written(.number(0.123456789012345678)) == "0.12345678901234568")
        #expect(written(.number(1e-5)) == "1e-05")
        #expect(written(.number(1.5e20)) == "1.5e+20")
        #expect(written(.number(9.80665)) == "9.80665")
    }

    @Test("every written double reads back to the same value")
    func doublesRoundTrip() throws {
        for value in [0.1, 1.0 / 3.0, 9.80665, -273.15, 1e-300, 1.7976931348623157e308, Double.leastNonzeroMagnitude, 781.25] {
            #expect(try JSONParser.parse(JSONWriter.encode(.number(value))) == .number(value))
        }
    }

    @Test("NaN and infinities, which JSON cannot express, are written as null")
    func nonFinite() {
        #expect(written([.number(.nan), .number(.infinity), .number(-.infinity)]) == "[null,null,null]")
    }

    @Test("strings escape quotes, backslashes and control characters, and nothing else")
    func stringEscaping() {
        #expect(written("a\"b\\c") == #""a\"b\\c""#)
        #expect(written("\n\r\t\u{8}\u{C}\u{0}\u{1F}") == #""\n\r\t\b\f\u0000\u001f""#)
        #expect(written("a/b é 🎧 \u{7F}") == "\"a/b é 🎧 \u{7F}\"")
        #expect(written(.object(["k\"ey": 1])) == #"{"k\"ey":1}"#)
    }

    @Test("what the parser reads, the writer writes back unchanged")
    func parseWriteRoundTrip() throws {
        let text = #"{"a":[1,-2.5,"x\ny",true,false,null,{}],"b":{"c":1e-05}}"#
        #expect(String(decoding: JSONWriter.encode(try JSONParser.parse(Array(text.utf8))), as: UTF8.self) == text)
    }

    @Test("commas fall between members and elements, not after containers' openings")
    func commas() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("a")
        writer.beginArray()
        writer.beginObject()
        writer.endObject()
        writer.beginObject()
        writer.field("x", 1)
        writer.endObject()
        writer.endArray()
        writer.optionalField("skipped", nil as Double?)
        writer.optionalField("kept", false)
        writer.key("z")
        writer.null()
        writer.endObject()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"a":[{},{"x":1}],"kept":false,"z":null}"#)
    }
}
