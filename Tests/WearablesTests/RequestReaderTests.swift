import Testing
import Wearables

/// The one reader of request objects: types, ranges, unknown fields, and whole field paths in every message.
@Suite("RequestReader")
struct RequestReaderTests {
    func failure(_ read: () throws(CommandError) -> Void) -> String? {
        do {
            try read()
            return nil
        } catch {
            #expect(error.code == .invalidValue)
            return error.message
        }
    }

    @Test("absent fields read as nil; null and wrong types are errors that quote what came")
    func absentAndWrongTypes() throws {
        let reader = RequestReader(["a": 1, "b": nil, "c": "x"])
        #expect(try reader.integer("missing", in: 0...5) == nil)
        #expect(failure { () throws(CommandError) in _ = try reader.bool("b") } == "b must be true or false, got null")
        #expect(failure { () throws(CommandError) in _ = try reader.integer("c", in: 0...5, unit: " s") } == #"c must be an integer from 0 to 5 s, got "x""#)
        #expect(failure { () throws(CommandError) in _ = try reader.integer("a", in: 2...5) } == "a must be an integer from 2 to 5, got 1")
    }

    @Test("nested objects and lists carry their path: sensors.accelerometer.period_ms, alarms[1].time")
    func paths() throws {
        let reader = RequestReader(["sensors": ["accelerometer": ["period_ms": "fast"]], "alarms": [["time": "07:00"], ["time": 7]]])
        let accelerometer = try #require(try reader.nested("sensors")?.nested("accelerometer"))
        #expect(failure { () throws(CommandError) in _ = try accelerometer.integer("period_ms", in: 0...1000) }?.hasPrefix("sensors.accelerometer.period_ms must be") == true)
        let alarms = try #require(try reader.nestedList("alarms"))
        #expect(failure { () throws(CommandError) in _ = try alarms[1].string("time") } == "alarms[1].time must be a string, got 7")
        #expect(failure { () throws(CommandError) in _ = try RequestReader(["alarms": [1]]).nestedList("alarms") } == "alarms[0] must be a JSON object, got 1")
        #expect(failure { () throws(CommandError) in _ = try RequestReader(["sensors": [1]]).nested("sensors") } == "sensors must be a JSON object, got [1]")
    }

    @Test("unknown fields are named with their path, and what is accepted is listed")
    func unknownFields() {
        let sensor = RequestReader(["period": 20], path: "sensors.gyroscope.")
        #expect(failure { () throws(CommandError) in try sensor.rejectUnknownFields(allowed: ["period_ms", "enabled"], request: "a Bose sensor") }
                == #"unknown field "sensors.gyroscope.period" for a Bose sensor, which accepts sensors.gyroscope.period_ms and sensors.gyroscope.enabled"#)
        #expect(failure { () throws(CommandError) in try RequestReader(["x": 1]).rejectUnknownFields(allowed: [], request: "refresh") }
                == #"refresh takes no fields, got unknown field "x""#)
    }

    @Test("a long value is cut short in the message, never echoed whole")
    func quoteIsShort() {
        let message = failure { () throws(CommandError) in _ = try RequestReader(["a": .text(String(repeating: "z", count: 500))]).bool("a") } ?? ""
        #expect(message.count < 80 && message.hasSuffix("..."))
    }
}
