import Gateway
import Wearables

extension FuzzTarget {
    /// The strict JSON parser every request payload goes through, and the writer that answers: what parses
    /// is written back and parses to the same value.
    static let json = FuzzTarget(
        name: "json",
        summary: "the strict JSON parser of request payloads, and the writer round trip"
    ) { bytes in
        guard let value = try? JSONParser.parse(bytes) else { return }
        let written = JSONWriter.encode(value)
        guard let again = try? JSONParser.parse(written, limits: JSONLimits(maximumBytes: 1 << 22)) else {
            preconditionFailure("\(value) was written as \(String(decoding: written, as: UTF8.self)), which does not parse")
        }
        precondition(again == value, "\(value) was written and parsed back as \(again)")
    }
}
