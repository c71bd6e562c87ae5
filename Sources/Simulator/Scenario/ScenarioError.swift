/// Why a scenario cannot be used. The message names the key path (`devices[1].options.rate_hz`) and, for YAML,
/// the line, so the author can find it.
public struct ScenarioError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The key path of the offending value (empty for the document itself).
    public let key: String
    public let reason: String
    public let line: Int?

    public init(key: String, reason: String, line: Int? = nil) {
        self.key = key
        self.reason = reason
        self.line = line
    }

    public var description: String {
        let place = key.isEmpty ? "scenario" : key
        return line.map { "\(place) (line \($0)): \(reason)" } ?? "\(place): \(reason)"
    }
}
