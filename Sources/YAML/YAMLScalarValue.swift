/// What a scalar means as a Swift value, read as Yams read it (so configuration files keep their meaning): numbers
/// only from plain text (`'8883'` is text), `_` allowed between digits, `0x`/`0o`/`0b` and a leading `0` (octal)
/// as radix prefixes, `1:30` as base 60, `yes`/`on` as true.
public enum YAMLScalarValue {
    public static func isNull(_ scalar: YAMLNode.Scalar) -> Bool {
        guard scalar.style == .plain else { return false }
        return ["", "~", "null", "Null", "NULL"].contains(scalar.string)
    }

    public static func bool(_ scalar: YAMLNode.Scalar) -> Bool? {
        guard scalar.resolvedTag != .str else { return nil }
        switch scalar.string.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: return nil
        }
    }

    public static func integer(_ scalar: YAMLNode.Scalar) -> Int? {
        integer(scalar, as: Int.self)
    }

    /// Any fixed-width integer; `nil` when the text is not a whole number or does not fit.
    public static func integer<Value: FixedWidthInteger>(_ scalar: YAMLNode.Scalar, as _: Value.Type) -> Value? {
        guard scalar.style == .any || scalar.style == .plain else { return nil }
        let signed = scalar.string.filter { $0 != "_" }
        if signed == "0" { return 0 }
        let negative = signed.hasPrefix("-")
        guard Value.isSigned || !negative else { return nil }
        let sign = negative ? "-" : ""
        let digits = signed.dropFirst(negative || signed.hasPrefix("+") ? 1 : 0)
        for (prefix, radix) in [("0x", 16), ("0b", 2), ("0o", 8), ("0", 8)] where digits.hasPrefix(prefix) {
            return Value(sign + digits.dropFirst(prefix.count), radix: radix)
        }
        if digits.contains(":") {
            return sexagesimal(signed).flatMap { Value(exactly: $0) }
        }
        return Value(signed)
    }

    public static func double(_ scalar: YAMLNode.Scalar) -> Double? {
        guard scalar.style == .any || scalar.style == .plain else { return nil }
        switch scalar.string.lowercased() {
        case ".inf", "+.inf": return .infinity
        case "-.inf": return -.infinity
        case ".nan": return .nan
        default:
            let text = scalar.string.filter { $0 != "_" }
            if text.contains(":") { return sexagesimalDouble(text) }
            return Double(text)
        }
    }

    /// `-1:30:15` is -(1·3600 + 30·60 + 15).
    private static func sexagesimal(_ text: String) -> Int64? {
        let negative = text.hasPrefix("-")
        let unsigned = text.drop { $0 == "-" || $0 == "+" }
        var total: Int64 = 0
        for component in unsigned.split(separator: ":", omittingEmptySubsequences: false) {
            guard let value = Int64(component) else { return nil }
            let (shifted, overflow) = total.multipliedReportingOverflow(by: 60)
            guard !overflow else { return nil }
            total = shifted + value
        }
        return negative ? -total : total
    }

    private static func sexagesimalDouble(_ text: String) -> Double? {
        let negative = text.hasPrefix("-")
        let unsigned = text.drop { $0 == "-" || $0 == "+" }
        var total = 0.0
        for component in unsigned.split(separator: ":", omittingEmptySubsequences: false) {
            guard let value = Double(component) else { return nil }
            total = total * 60 + value
        }
        return negative ? -total : total
    }
}
