import YAML

/// The YAML node tree of one configuration file: checked against the schema, and asked for line numbers.
///
/// The YAML nodes remember where they started, so any key path (from the schema walk or from a decoding
/// error's coding path) can be turned back into a line of the file.
struct ConfigurationDocument {
    var source: String

    // MARK: Schema check

    /// Checks `node` against `schema` and returns it with empty sections and lists made explicit (so
    /// `mqtt:` with nothing under it decodes as all defaults).
    func checked(
        _ node: YAMLNode?,
        against schema: ConfigurationSchema,
        at path: ConfigurationKeyPath
    ) throws(ConfigurationError) -> YAMLNode {
        let isEmpty = node?.isNull ?? true
        if isEmpty {
            switch schema {
            case .value: return node ?? YAMLNode("", tag: .null, style: .plain)
            case .section: return .mapping(YAMLNode.Mapping(mark: node?.mark))
            case .list: return .sequence(YAMLNode.Sequence(mark: node?.mark))
            case .document: return .mapping(YAMLNode.Mapping(mark: node?.mark))
            }
        }
        switch (schema, node) {
        case (.value, .scalar(let scalar)?):
            return .scalar(scalar)
        case (.document, .mapping(let mapping)?):
            return .mapping(mapping)
        case (.section(let section), .mapping(let mapping)?):
            return .mapping(try checked(mapping, against: section, at: path))
        case (.list(let item), .sequence(let sequence)?):
            var items: [YAMLNode] = []
            for (index, element) in sequence.items.enumerated() {
                items.append(try checked(element, against: item, at: path.appending(.index(index))))
            }
            return .sequence(YAMLNode.Sequence(items, mark: sequence.mark))
        case (_, let node):
            let expected =
                switch schema {
                case .value: "a single value"
                case .section: "a section of keys"
                case .list: "a list"
                case .document: "a mapping"
                }
            throw ConfigurationError(
                source: source, line: node?.mark?.line, keyPath: path.description,
                message: "expected \(expected), got \(node.map(Self.describe) ?? "nothing")")
        }
    }

    private func checked(
        _ mapping: YAMLNode.Mapping,
        against section: SectionSchema,
        at path: ConfigurationKeyPath
    ) throws(ConfigurationError) -> YAMLNode.Mapping {
        var pairs: [(key: YAMLNode, value: YAMLNode)] = []
        for (keyNode, value) in mapping.pairs {
            guard case .scalar(let keyScalar) = keyNode else {
                throw ConfigurationError(
                    source: source, line: keyNode.mark?.line, keyPath: path.description,
                    message: "keys must be plain names, got \(Self.describe(keyNode))")
            }
            let key = keyScalar.string
            let keyPath = path.appending(key)
            if let message = section.rejected[key] {
                throw ConfigurationError(
                    source: source, line: keyNode.mark?.line, keyPath: keyPath.description, message: message)
            }
            guard let schema = section.schema(forKey: key) else {
                throw ConfigurationError(
                    source: source, line: keyNode.mark?.line, keyPath: keyPath.description,
                    message: Self.unknownKeyMessage(key, known: section.keys))
            }
            pairs.append((keyNode, try checked(value, against: schema, at: keyPath)))
        }
        return YAMLNode.Mapping(pairs, mark: mapping.mark)
    }

    static func unknownKeyMessage(_ key: String, known: [String]) -> String {
        let suggestion = known.min { editDistance(key, $0) < editDistance(key, $1) }
            .flatMap { editDistance(key, $0) <= max(1, $0.count / 3) ? $0 : nil }
        let hint = suggestion.map { ", did you mean \($0)?" } ?? ""
        return "unknown key\(hint) (known: \(known.joined(separator: ", ")))"
    }

    /// A short description of a node for "got …" in messages.
    static func describe(_ node: YAMLNode) -> String {
        switch node {
        case .scalar(let scalar):
            "\"\(scalar.string)\""
        case .mapping:
            "a section of keys"
        case .sequence:
            "a list"
        }
    }

    // MARK: Environment overrides

    /// `tree` with the value at `keys` replaced by `value`, creating sections on the way. The tree has
    /// passed ``checked(_:against:at:)``, so every section on the path is a mapping or absent.
    static func setting(_ value: YAMLNode, at keys: ArraySlice<String>, in tree: YAMLNode) -> YAMLNode {
        guard let key = keys.first, var mapping = tree.mapping else { return value }
        let child = mapping[key] ?? .mapping(YAMLNode.Mapping())
        mapping[key] = setting(value, at: keys.dropFirst(), in: child)
        return .mapping(mapping)
    }

    // MARK: Locating errors

    /// Where the value at `keyPath` came from: this file and its line, or the environment variable that
    /// set it (or a section above it).
    func location(
        of keyPath: ConfigurationKeyPath,
        in tree: YAMLNode,
        overrides: EnvironmentOverrides
    ) -> (source: String, line: Int?) {
        if let variable = overrides.variable(setting: keyPath) {
            return (variable, nil)
        }
        return (source, Self.deepestNode(at: keyPath, in: tree).mark?.line)
    }

    /// The node at `keyPath`, or the deepest node on the way to it when the path leaves the tree (a
    /// missing key is reported at its section).
    static func deepestNode(at keyPath: ConfigurationKeyPath, in tree: YAMLNode) -> YAMLNode {
        var node = tree
        for component in keyPath.components {
            let next: YAMLNode?
            switch (component, node) {
            case (.key(let key), .mapping(let mapping)):
                next = mapping.pairs.first { $0.key.string == key }?.value
            case (.index(let index), .sequence(let sequence)) where sequence.items.indices.contains(index):
                next = sequence.items[index]
            default:
                next = nil
            }
            // Nodes made up for empty values have no position; their parent's is the best there is.
            guard let next, next.mark != nil else { break }
            node = next
        }
        return node
    }

    /// Turns an error from decoding `tree` into a ``ConfigurationError`` naming the key and its line.
    func located(_ error: any Error, in tree: YAMLNode, overrides: EnvironmentOverrides) -> ConfigurationError {
        let keyPath: ConfigurationKeyPath
        let message: String
        switch error {
        case let invalid as InvalidConfigurationValue:
            keyPath = invalid.keyPath
            message = invalid.message
        case DecodingError.typeMismatch(let type, let context):
            keyPath = ConfigurationKeyPath(codingPath: context.codingPath)
            let node = Self.deepestNode(at: keyPath, in: tree)
            message = "expected \(Self.describe(type)), got \(Self.describe(node))"
                + (Self.isQuoted(node) && type != String.self ? " (quoted, so it is text; remove the quotes)" : "")
        case DecodingError.keyNotFound(let key, let context):
            keyPath = ConfigurationKeyPath(codingPath: context.codingPath + [key])
            message = "is required"
        case DecodingError.valueNotFound(let type, let context):
            keyPath = ConfigurationKeyPath(codingPath: context.codingPath)
            message = "expected \(Self.describe(type)), got nothing"
        case DecodingError.dataCorrupted(let context):
            keyPath = ConfigurationKeyPath(codingPath: context.codingPath)
            message = context.debugDescription
        default:
            keyPath = ConfigurationKeyPath()
            message = firstLine(of: error)
        }
        let (source, line) = location(of: keyPath, in: tree, overrides: overrides)
        return ConfigurationError(source: source, line: line, keyPath: keyPath.description, message: message)
    }

    private static func isQuoted(_ node: YAMLNode) -> Bool {
        guard case .scalar(let scalar) = node else { return false }
        return scalar.style == .singleQuoted || scalar.style == .doubleQuoted
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is any BinaryInteger.Type: "a whole number"
        case is any BinaryFloatingPoint.Type: "a number"
        case is Bool.Type: "true or false"
        case is String.Type: "a single value"
        case is YAMLNode.Mapping.Type: "a section of keys"
        case is YAMLNode.Sequence.Type: "a list"
        case is YAMLNode.Scalar.Type: "a single value"
        default: "a value of type \(type)"
        }
    }
}

/// Edit distance counting a swap of neighbours as one edit (optimal string alignment), for suggesting
/// the key a typo meant: `hots` is one edit from `host`.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.utf8)
    let b = Array(b.utf8)
    guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
    var beforePrevious = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in 1...b.count {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                current[j] = min(current[j], beforePrevious[j - 2] + 1)
            }
        }
        beforePrevious = previous
        previous = current
    }
    return previous[b.count]
}
