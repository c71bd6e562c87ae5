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
