import Logging

/// Turns a ``LogRecord`` into one line of text (without the newline). Pure: no clock, no I/O.
///
/// Both formats start with `ts`, `level`, `label` and `msg`, then the metadata sorted by key, so lines are
/// stable to diff and grep. Metadata keys that would clash with those four are prefixed with `_`.
/// The formatter never drops a value and never emits a line break inside a line.
public struct LogLineFormatter: Sendable {
    public var format: LogFormat

    public init(format: LogFormat) {
        self.format = format
    }

    static let reservedKeys: Set<String> = ["ts", "level", "label", "msg"]

    public func line(for record: LogRecord) -> String {
        var fields: [(String, Logger.MetadataValue)] = [
            ("ts", .string(Self.iso8601(milliseconds: record.timestampMilliseconds))),
            ("level", .string(record.level.rawValue)),
            ("label", .string(record.label)),
            ("msg", .string(record.message)),
        ]
        var metadata = record.metadata
        if let error = record.error, metadata["error"] == nil {
            metadata["error"] = .string(error)
        }
        for key in metadata.keys.sorted() {
            let name = Self.reservedKeys.contains(key) ? "_" + key : key
            fields.append((name, metadata[key]!))
        }
        switch format {
        case .logfmt:
            return fields.map { "\(Self.logfmtKey($0.0))=\(Self.logfmtValue($0.1))" }.joined(separator: " ")
        case .json:
            return "{" + fields.map { "\(Self.jsonString($0.0)):\(Self.json($0.1))" }.joined(separator: ",") + "}"
        }
    }

    // MARK: logfmt

    /// Keys cannot be quoted in logfmt, so characters that would end a key become `_`.
    static func logfmtKey(_ key: String) -> String {
        if key.isEmpty { return "_" }
        return String(String.UnicodeScalarView(key.unicodeScalars.map { needsQuoting($0) ? "_" : $0 }))
    }

    static func logfmtValue(_ value: Logger.MetadataValue) -> String {
        let text: String
        switch value {
        case .string(let string): text = string
        case .stringConvertible(let convertible): text = convertible.description
        case .dictionary, .array: text = json(value)
        }
        return logfmtQuoted(text)
    }

    /// Quotes like go-logfmt: when empty or containing a space, `=`, `"` or a control character.
    static func logfmtQuoted(_ text: String) -> String {
        guard text.isEmpty || text.unicodeScalars.contains(where: needsQuoting) else { return text }
        return "\"" + escaped(text) + "\""
    }

    private static func needsQuoting(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value <= 0x20 || scalar == "=" || scalar == "\"" || isControl(scalar)
            || scalar.properties.generalCategory == .spaceSeparator
            || scalar.properties.generalCategory == .lineSeparator
            || scalar.properties.generalCategory == .paragraphSeparator
    }

    // MARK: JSON

    static func json(_ value: Logger.MetadataValue) -> String {
        switch value {
        case .string(let string):
            return jsonString(string)
        case .stringConvertible(let convertible):
            return jsonLiteral(convertible) ?? jsonString(convertible.description)
        case .dictionary(let dictionary):
            let members = dictionary.keys.sorted().map { "\(jsonString($0)):\(json(dictionary[$0]!))" }
            return "{" + members.joined(separator: ",") + "}"
        case .array(let array):
            return "[" + array.map(json).joined(separator: ",") + "]"
        }
    }

    /// Numbers and booleans stay numbers and booleans; everything else becomes a string.
    private static func jsonLiteral(_ value: any CustomStringConvertible & Sendable) -> String? {
        switch value {
        case let bool as Bool:
            return bool ? "true" : "false"
        case let integer as any BinaryInteger:
            return integer.description
        case let double as Double where double.isFinite:
            return double.description
        case let float as Float where float.isFinite:
            return float.description
        default:
            return nil
        }
    }

    static func jsonString(_ text: String) -> String {
        "\"" + escaped(text) + "\""
    }

    // MARK: Shared

    /// Escapes for the inside of a double-quoted string; valid for both JSON and logfmt.
    private static func escaped(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result.append(contentsOf: #"\""#.unicodeScalars)
            case "\\": result.append(contentsOf: #"\\"#.unicodeScalars)
            case "\n": result.append(contentsOf: #"\n"#.unicodeScalars)
            case "\r": result.append(contentsOf: #"\r"#.unicodeScalars)
            case "\t": result.append(contentsOf: #"\t"#.unicodeScalars)
            case _ where isControl(scalar) || scalar == "\u{2028}" || scalar == "\u{2029}":
                let hex = String(scalar.value, radix: 16)
                result.append(contentsOf: ("\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex).unicodeScalars)
            default: result.append(scalar)
            }
        }
        return String(result)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control
    }

    // MARK: Time

    /// `2026-11-21T22:05:04.123Z`, computed with civil-from-days arithmetic (no locale, no formatter).
    static func iso8601(milliseconds: Int64) -> String {
        let (seconds, millisecond) = floorDivide(milliseconds, 1000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(millisecond, 3))Z"
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let remainder = value % divisor
        return remainder < 0 ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
