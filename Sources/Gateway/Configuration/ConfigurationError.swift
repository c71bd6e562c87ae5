/// A configuration problem the user has to fix, located precisely enough to fix it without guessing.
///
/// `source` is the configuration file path or, when the value came from the environment, the name of the
/// environment variable; `line` is set only for values read from a file. The CLI prints ``description``
/// and exits with status 1.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The file path, or the environment variable the bad value came from.
    public var source: String
    /// The 1-based line in `source`, when `source` is a file and the position is known.
    public var line: Int?
    /// Dotted key path such as `mqtt.tls.ca_file` or `devices[1].name`; empty for the whole document.
    public var keyPath: String
    /// What is wrong, as a sentence fragment starting in lower case.
    public var message: String

    public init(source: String, line: Int? = nil, keyPath: String, message: String) {
        self.source = source
        self.line = line
        self.keyPath = keyPath
        self.message = message
    }

    /// One line, compiler style: `config.yaml:7: mqtt.hots: unknown key (known: host, port, …)`.
    public var description: String {
        var location = source
        if let line { location += ":\(line)" }
        let subject = keyPath.isEmpty ? "" : "\(keyPath): "
        return "\(location): \(subject)\(message)"
    }
}
