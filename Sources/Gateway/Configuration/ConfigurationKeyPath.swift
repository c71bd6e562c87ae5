/// Where a value sits in the configuration document: `mqtt.tls.ca_file`, `devices[1].name`.
///
/// The one currency between the decoder's coding paths, the YAML node tree (for line numbers) and the
/// environment overrides (for naming the variable a value came from).
struct ConfigurationKeyPath: Hashable, Sendable, CustomStringConvertible {
    enum Component: Hashable, Sendable {
        case key(String)
        case index(Int)
    }

    var components: [Component]

    init(_ components: [Component] = []) {
        self.components = components
    }

    init(keys: [String]) {
        self.components = keys.map(Component.key)
    }

    /// Coding keys with an integer value come from unkeyed (list) containers; all of ours are strings.
    init(codingPath: [any CodingKey]) {
        self.components = codingPath.map { key in
            if let index = key.intValue { .index(index) } else { .key(key.stringValue) }
        }
    }

    func appending(_ component: Component) -> ConfigurationKeyPath {
        ConfigurationKeyPath(components + [component])
    }

    func appending(_ key: String) -> ConfigurationKeyPath {
        appending(.key(key))
    }

    /// Whether `self` is `other` or lies inside it.
    func hasPrefix(_ other: ConfigurationKeyPath) -> Bool {
        components.starts(with: other.components)
    }

    var description: String {
        var text = ""
        for component in components {
            switch component {
            case .key(let key):
                if !text.isEmpty { text += "." }
                text += key
            case .index(let index):
                text += "[\(index)]"
            }
        }
        return text
    }
}

/// A value that decoded but breaks a rule of the configuration; thrown by the sections' decoders and
/// turned into a located ``ConfigurationError`` by the loader.
struct InvalidConfigurationValue: Error {
    var keyPath: ConfigurationKeyPath
    var message: String
}

extension KeyedDecodingContainer {
    /// The key path of `key` in this container, for ``InvalidConfigurationValue``.
    func keyPath(_ key: Key) -> ConfigurationKeyPath {
        ConfigurationKeyPath(codingPath: codingPath + [key])
    }

    func invalid(_ key: Key, _ message: String) -> InvalidConfigurationValue {
        InvalidConfigurationValue(keyPath: keyPath(key), message: message)
    }

    /// The value at `key`, or `defaultValue` when the key is missing or empty (`null`).
    func value<T: Decodable>(_ key: Key, default defaultValue: T) throws -> T {
        try decodeIfPresent(T.self, forKey: key) ?? defaultValue
    }

    /// A `host:port` listen address (`metrics.listen`, `frontend.listen`) as written and split, or `defaultValue`.
    func listenAddress(_ key: Key, default defaultValue: String) throws -> (text: String, address: Configuration.ListenAddress) {
        let text = try value(key, default: defaultValue)
        guard let address = Configuration.ListenAddress(text) else {
            throw invalid(key, "must be host:port with a port between 1 and 65535 (an IPv6 host in brackets: [::1]:\(Configuration.ListenAddress(defaultValue)?.port ?? 8080))")
        }
        return (text, address)
    }

    /// An integer in `range`, or `defaultValue` when missing.
    func integer(_ key: Key, default defaultValue: Int, in range: ClosedRange<Int>) throws -> Int {
        let value = try self.value(key, default: defaultValue)
        guard range.contains(value) else {
            throw invalid(key, "must be between \(range.lowerBound) and \(range.upperBound), got \(value)")
        }
        return value
    }

    /// A finite number, or `defaultValue` when missing; `isAllowed` states the rule that `rule` describes.
    func number(
        _ key: Key,
        default defaultValue: Double,
        rule: String,
        isAllowed: (Double) -> Bool
    ) throws -> Double {
        let value = try self.value(key, default: defaultValue)
        guard value.isFinite, isAllowed(value) else {
            throw invalid(key, "must be \(rule), got \(value)")
        }
        return value
    }

    /// One of a fixed set of names, matched case-insensitively, or `defaultValue` when missing.
    func choice<T: RawRepresentable & CaseIterable>(_ key: Key, default defaultValue: T) throws -> T
    where T.RawValue == String {
        guard let text = try decodeIfPresent(String.self, forKey: key) else { return defaultValue }
        if let match = T.allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() }) {
            return match
        }
        let allowed = T.allCases.map(\.rawValue).joined(separator: ", ")
        throw invalid(key, "must be one of \(allowed), got \"\(text)\"")
    }
}
