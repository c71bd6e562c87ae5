import YAML

/// Reads one YAML mapping of a scenario with typed accessors that name the key path and line in their errors,
/// and remembers which keys were read so a misspelt key is an error rather than silently ignored.
struct YAMLMappingReader {
    let path: String
    private let pairs: [(key: String, value: YAMLNode)]
    private let mark: YAMLMark?
    private var read: Set<String> = []

    init(_ node: YAMLNode, path: String) throws(ScenarioError) {
        guard case .mapping(let mapping) = node else {
            throw ScenarioError(key: path, reason: "expected a mapping of keys to values", line: node.mark?.line)
        }
        var pairs: [(String, YAMLNode)] = []
        for (key, value) in mapping.pairs {
            guard case .scalar(let scalar) = key else {
                throw ScenarioError(key: path, reason: "keys must be plain names", line: key.mark?.line)
            }
            pairs.append((scalar.string, value))
        }
        self.pairs = pairs
        self.path = path
        mark = mapping.mark
    }

    func keyPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// The node at `key`, or nil (also for an explicit null).
    mutating func node(_ key: String) -> YAMLNode? {
        read.insert(key)
        guard let node = pairs.first(where: { $0.key == key })?.value else { return nil }
        if case .scalar(let scalar) = node, node.tag == .null, scalar.string.isEmpty || scalar.string == "~" || scalar.string == "null" {
            return nil
        }
        return node
    }

    mutating func required(_ key: String) throws(ScenarioError) -> YAMLNode {
        guard let node = node(key) else {
            throw ScenarioError(key: keyPath(key), reason: "is required", line: mark?.line)
        }
        return node
    }

    func error(_ key: String, _ reason: String, _ node: YAMLNode?) -> ScenarioError {
        ScenarioError(key: keyPath(key), reason: reason, line: node?.mark?.line ?? mark?.line)
    }

    /// The raw text of a scalar (addresses such as `11:22:33:44:55:66` would otherwise be read as YAML 1.1
    /// base-60 numbers).
    mutating func text(_ key: String) throws(ScenarioError) -> String? {
        guard let node = node(key) else { return nil }
        guard case .scalar(let scalar) = node else { throw error(key, "expected a single value", node) }
        return scalar.string
    }

    mutating func string(_ key: String, allowed: [String]? = nil) throws(ScenarioError) -> String? {
        guard let value = try text(key) else { return nil }
        if let allowed, !allowed.contains(value) {
            throw error(key, "must be one of \(allowed.joined(separator: ", ")), got \"\(value)\"", pairs.first { $0.key == key }?.value)
        }
        return value
    }

    mutating func bool(_ key: String) throws(ScenarioError) -> Bool? {
        guard let node = node(key) else { return nil }
        guard node.tag == .bool, let value = node.bool else { throw error(key, "expected true or false", node) }
        return value
    }

    mutating func int(_ key: String, in range: ClosedRange<Int>) throws(ScenarioError) -> Int? {
        guard let node = node(key) else { return nil }
        guard node.tag == .int, let value = node.int else { throw error(key, "expected a whole number", node) }
        guard range.contains(value) else {
            throw error(key, "must be between \(range.lowerBound) and \(range.upperBound), got \(value)", node)
        }
        return value
    }

    /// `250ms`, `2s`, `1.5s`, `1m`, or a plain number of seconds.
    mutating func duration(_ key: String, in range: ClosedRange<Duration> = .zero ... .seconds(86_400)) throws(ScenarioError) -> Duration? {
        guard let node = node(key) else { return nil }
        guard case .scalar(let scalar) = node, let duration = Self.parseDuration(scalar.string) else {
            throw error(key, "expected a duration such as 500ms, 2s or 1.5 (seconds)", node)
        }
        guard range.contains(duration) else { throw error(key, "must be between \(range.lowerBound) and \(range.upperBound)", node) }
        return duration
    }

    static func parseDuration(_ text: String) -> Duration? {
        let trimmed = String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
        let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("s", 1), ("m", 60)]
        for unit in units where trimmed.hasSuffix(unit.suffix) {
            guard let number = Double(trimmed.dropLast(unit.suffix.count)), number >= 0, number.isFinite else { return nil }
            return .milliseconds(Int64((number * unit.seconds * 1000).rounded()))
        }
        guard let seconds = Double(trimmed), seconds >= 0, seconds.isFinite else { return nil }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    mutating func sequence(_ key: String) throws(ScenarioError) -> [YAMLNode] {
        guard let node = node(key) else { return [] }
        guard case .sequence(let sequence) = node else { throw error(key, "expected a list", node) }
        return sequence.items
    }

    /// The entries of a nested mapping as raw nodes, keys as written.
    mutating func entries(_ key: String) throws(ScenarioError) -> [(key: String, value: YAMLNode)]? {
        guard let node = node(key) else { return nil }
        return try YAMLMappingReader(node, path: keyPath(key)).pairs
    }

    func rejectUnknownKeys(known: [String]? = nil) throws(ScenarioError) {
        if let unknown = pairs.first(where: { !read.contains($0.key) }) {
            let names = (known ?? Array(read)).sorted().joined(separator: ", ")
            throw ScenarioError(key: keyPath(unknown.key), reason: "unknown key (known here: \(names))",
                                line: unknown.value.mark?.line)
        }
    }
}
