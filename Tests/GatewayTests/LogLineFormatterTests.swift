import Foundation
import Logging
import Testing

@testable import Gateway

@Suite("Log lines")
struct LogLineFormatterTests {
    /// 2026-11-21T22:05:04.123Z
    let timestamp: Int64 = 1_795_298_704_123

    func record(_ message: String = "connected to broker", metadata: Logger.Metadata = [:], error: String? = nil) -> LogRecord {
        LogRecord(timestampMilliseconds: timestamp, level: .info, label: "mqtt", message: message, metadata: metadata, error: error)
    }

    @Test("logfmt: fixed fields first, metadata sorted, spaces quoted")
    func logfmtLine() {
        let line = LogLineFormatter(format: .logfmt).line(
            for: record(metadata: ["port": .stringConvertible(1883), "host": "127.0.0.1"]))
        #expect(line == #"ts=2026-11-21T22:05:04.123Z level=info label=mqtt msg="connected to broker" host=127.0.0.1 port=1883"#)
    }

    @Test("logfmt: quotes, equals signs, newlines and empty values are quoted and escaped")
    func logfmtQuoting() {
        let line = LogLineFormatter(format: .logfmt).line(
            for: record(
                "say \"hi\"\nthen go",
                metadata: ["a": "x=y", "b": "", "c": "back\\slash", "d": "tab\there", "key with space": "v", "e": "plain"]))
        #expect(line.contains(#"msg="say \"hi\"\nthen go""#))
        #expect(line.contains(#" a="x=y""#))
        #expect(line.contains(#" b="""#))
        #expect(line.contains(#" c=back\slash"#))
        #expect(line.contains(#" d="tab\there""#))
        #expect(line.contains(" key_with_space=v"))
        #expect(line.contains(" e=plain"))
        #expect(!line.contains("\n"))
    }

    @Test("logfmt: nested metadata is rendered as quoted JSON")
    func logfmtNested() {
        let line = LogLineFormatter(format: .logfmt).line(for: record(metadata: ["devices": ["a", "b"]]))
        #expect(line.hasSuffix(#" devices="[\"a\",\"b\"]""#))
    }

    @Test("JSON: every line is one valid object with the fields and typed metadata")
    func jsonLine() throws {
        let line = LogLineFormatter(format: .json).line(
            for: record(
                "quote \" backslash \\ newline \n control \u{01} emoji 🎧",
                metadata: [
                    "host": "127.0.0.1",
                    "port": .stringConvertible(1883),
                    "rate": .stringConvertible(2.5),
                    "up": .stringConvertible(true),
                    "nan": .stringConvertible(Double.nan),
                    "device": ["id": "left_wrist", "rssi": .stringConvertible(-61)],
                    "list": [.string("x"), ["k": "v"]],
                    "msg": "clash",
                ],
                error: "broker refused"
            ))
        #expect(!line.contains("\n"))
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["ts"] as? String == "2026-11-21T22:05:04.123Z")
        #expect(object["level"] as? String == "info")
        #expect(object["label"] as? String == "mqtt")
        #expect(object["msg"] as? String == "quote \" backslash \\ newline \n control \u{01} emoji 🎧")
        #expect(object["_msg"] as? String == "clash")
        #expect(object["host"] as? String == "127.0.0.1")
        #expect((object["port"] as? NSNumber)?.intValue == 1883)
        #expect((object["rate"] as? NSNumber)?.doubleValue == 2.5)
        #expect(object["up"] as? Bool == true)
        #expect(object["nan"] as? String == "nan")
        #expect(object["error"] as? String == "broker refused")
        let device = try #require(object["device"] as? [String: Any])
        #expect(device["id"] as? String == "left_wrist")
        #expect((device["rssi"] as? NSNumber)?.intValue == -61)
        let list = try #require(object["list"] as? [Any])
        #expect(list.first as? String == "x")
        #expect((list.last as? [String: String]) == ["k": "v"])
        #expect(line.hasPrefix(#"{"ts":"2026-11-21T22:05:04.123Z","level":"info","label":"mqtt","msg":"#))
    }

    @Test(
        "timestamps are UTC ISO 8601 with milliseconds",
        arguments: [
            (Int64(0), "1970-01-01T00:00:00.000Z"),
            (Int64(-1), "1969-12-31T23:59:59.999Z"),
            (Int64(951_782_400_000), "2000-02-29T00:00:00.000Z"),
            (Int64(1_795_298_704_123), "2026-11-21T22:05:04.123Z"),
            (Int64(4_102_444_799_999), "2099-12-31T23:59:59.999Z"),
        ] as [(Int64, String)]
    )
    func timestamps(milliseconds: Int64, expected: String) {
        #expect(LogLineFormatter.iso8601(milliseconds: milliseconds) == expected)
    }

    @Test("the handler merges metadata, honours its level, and writes whole lines")
    func handlerWritesLines() throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        defer { close(descriptors[0]) }
        let writer = LineWriter(fileDescriptor: descriptors[1])
        var logger = Logger(label: "gateway") { label in
            StderrLogHandler(label: label, format: .json, level: .notice, metadataProvider: nil, output: writer)
        }
        logger[metadataKey: "gateway_id"] = "lab"
        logger.info("not shown")
        logger.notice("shown", metadata: ["device": "left"])
        logger.error("also shown", metadata: ["gateway_id": "override"])
        close(descriptors[1])

        let output = FileHandle(fileDescriptor: descriptors[0]).readDataToEndOfFile()
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 2)
        let objects = try lines.map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]) }
        #expect(objects.first?["msg"] == "shown")
        #expect(objects.first?["level"] == "notice")
        #expect(objects.first?["label"] == "gateway")
        #expect(objects.first?["gateway_id"] == "lab")
        #expect(objects.first?["device"] == "left")
        #expect(objects.last?["gateway_id"] == "override")
    }
}
