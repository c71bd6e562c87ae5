#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import YAML

extension Configuration {
    /// Reads the configuration file at `path`, applies `WEAR2MQTT_…` overrides from `environment`, reads the
    /// password, and validates everything.
    ///
    /// - Throws: ``ConfigurationError`` for a missing or unreadable file, a YAML syntax error, an unknown
    ///   key or variable, a bad value, or an unreadable `mqtt.password_file`.
    public static func load(path: String, environment: [String: String]) throws(ConfigurationError) -> Configuration {
        let text: String
        do {
            text = try readTextFile(path)
        } catch {
            throw ConfigurationError(source: path, keyPath: "", message: "cannot read the configuration file: \(error.reason)")
        }
        return try parse(yaml: text, source: path, environment: environment)
    }

    /// Like ``load(path:environment:)`` for YAML text already in memory; `source` names it in errors.
    /// A relative `mqtt.password_file` is still read relative to the working directory.
    public static func parse(
        yaml: String,
        source: String = "<string>",
        environment: [String: String] = [:]
    ) throws(ConfigurationError) -> Configuration {
        let schema = Configuration.sectionSchema
        let root: YAMLNode?
        do {
            root = try YAMLComposer.compose(yaml)
        } catch {
            throw syntaxError(error, source: source)
        }
        let document = ConfigurationDocument(source: source)
        var tree = try document.checked(root, against: .section(schema), at: ConfigurationKeyPath())
        let environmentOverrides = try EnvironmentOverrides(environment: environment, schema: schema)
        for override in environmentOverrides.overrides {
            tree = ConfigurationDocument.setting(override.value, at: override.keys[...], in: tree)
        }

        var configuration: Configuration
        do {
            configuration = try YAMLDecoder().decode(Configuration.self, from: tree)
        } catch {
            throw document.located(error, in: tree, overrides: environmentOverrides)
        }

        // A secret from its environment variable, else from the file its key names (read here, so an unreadable
        // file is a configuration error at that key's line).
        func secret(_ override: Secret?, file: String?, keys: [String], what: String) throws(ConfigurationError) -> Secret? {
            if let override { return override }
            guard let file else { return nil }
            let keyPath = ConfigurationKeyPath(keys: keys)
            return try readSecret(file, keyPath: keys.joined(separator: "."), what: what,
                                  location: document.location(of: keyPath, in: tree, overrides: environmentOverrides))
        }
        if let password = try secret(environmentOverrides.password, file: configuration.mqtt.passwordFile,
                                     keys: ["mqtt", "password_file"], what: "password") {
            configuration.mqtt.password = password
        }
        if let token = try secret(environmentOverrides.frontendToken, file: configuration.frontend.authTokenFile,
                                  keys: ["frontend", "auth_token_file"], what: "token") {
            configuration.frontend.authToken = token
        }
        for (index, radio) in configuration.radios.enumerated() {
            guard let file = radio.keyFile else { continue }
            let keys: [ConfigurationKeyPath.Component] = [.key("radios"), .index(index), .key("key_file")]
            let location = document.location(of: ConfigurationKeyPath(keys), in: tree, overrides: environmentOverrides)
            let key = try readSecret(file, keyPath: "radios[\(index)].key_file", what: "key", location: location)
            if let problem = Configuration.RadioEntry.keyProblem(key.reveal()) {
                throw ConfigurationError(source: location.source, line: location.line, keyPath: "radios[\(index)].key_file",
                                         message: "the key in \(file) \(problem)")
            }
            configuration.radios[index].key = key
        }
        if let problem = configuration.frontend.exposureProblem {
            let location = document.location(of: ConfigurationKeyPath(keys: ["frontend", "listen"]), in: tree, overrides: environmentOverrides)
            throw ConfigurationError(source: location.source, line: location.line, keyPath: "frontend.listen", message: problem)
        }
        return configuration
    }

    private static func syntaxError(_ error: YAMLError, source: String) -> ConfigurationError {
        let (line, problem) = yamlProblem(error)
        return ConfigurationError(source: source, line: line, keyPath: "", message: "invalid YAML: \(problem)")
    }

    /// The line and the one-line problem of a YAML error, in libyaml's words.
    static func yamlProblem(_ error: YAMLError) -> (line: Int?, problem: String) {
        switch error {
        case .syntax(let problem, let mark, let context):
            return (mark.line, problem + (context.map { " (\($0.text) at line \($0.mark.line))" } ?? ""))
        case .duplicatedKeys(let duplicates, let mark):
            let keys = duplicates.sorted().joined(separator: ", ")
            return (mark.line, "the section starting on this line has the key \(keys) more than once")
        case .reader(let problem, let offset):
            return (nil, "reader: \(problem) at byte \(offset)")
        }
    }

    /// A secret read from the file named at `keyPath`: its text without the final line break, never empty.
    private static func readSecret(
        _ path: String, keyPath: String, what: String,
        location: (source: String, line: Int?)
    ) throws(ConfigurationError) -> Secret {
        let text: String
        do {
            text = try readTextFile(path)
        } catch {
            throw ConfigurationError(
                source: location.source, line: location.line, keyPath: keyPath,
                message: "cannot read the \(what) file \(path): \(error.reason)")
        }
        var password = Substring(text)
        while let last = password.last, last == "\n" || last == "\r" || last == "\r\n" {
            password = password.dropLast()
        }
        if password.isEmpty {
            throw ConfigurationError(
                source: location.source, line: location.line, keyPath: keyPath,
                message: "the \(what) file \(path) is empty")
        }
        return Secret(String(password))
    }
}

/// Why a file could not be read, as `strerror` says it.
struct FileReadError: Error {
    var reason: String
}

/// Reads a whole UTF-8 file with plain POSIX calls, so the error says exactly what the system said.
func readTextFile(_ path: String) throws(FileReadError) -> String {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw FileReadError(reason: String(cString: strerror(errno))) }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count == 0 { break }
        if count < 0 {
            if errno == EINTR { continue }
            throw FileReadError(reason: String(cString: strerror(errno)))
        }
        bytes += buffer[..<count]
        if bytes.count > 16 * 1024 * 1024 { throw FileReadError(reason: "larger than 16 MiB") }
    }
    guard let text = String(validating: bytes, as: UTF8.self) else {
        throw FileReadError(reason: "not valid UTF-8 text")
    }
    return text
}
