import YAML

/// The `WEAR2MQTT_<SECTION>_<KEY>` environment variables, resolved against the configuration schema.
///
/// Keys contain underscores too (`state_dir`, `ca_file`), so a variable name is matched by walking the
/// schema: `WEAR2MQTT_MQTT_TLS_CA_FILE` is `mqtt` → `tls` → `ca_file` because those are the keys that
/// exist. A variable with the prefix that names no key is an error, like an unknown key in the file.
/// Values are read as YAML scalars (`8883` is a number, `true` a boolean, `'#x'` a quoted string); an
/// empty value means the default. Lists (`devices`) cannot be set this way.
struct EnvironmentOverrides {
    static let prefix = "WEAR2MQTT_"
    /// Supplies the MQTT password verbatim (not parsed as YAML).
    static let passwordVariable = "WEAR2MQTT_MQTT_PASSWORD"
    /// Supplies the web interface's token verbatim.
    static let frontendTokenVariable = "WEAR2MQTT_FRONTEND_AUTH_TOKEN"
    /// Variables with the prefix that are not configuration keys (the CLI may use them; a debug build also reads
    /// `DebugDataPathStall`'s, which a release build refuses like any unknown key).
    #if DEBUG
    static let ignoredVariables: Set<String> = ["WEAR2MQTT_CONFIG", DebugDataPathStall.variable]
    #else
    static let ignoredVariables: Set<String> = ["WEAR2MQTT_CONFIG"]
    #endif

    struct Override {
        var variable: String
        var keyPath: ConfigurationKeyPath
        var keys: [String]
        var value: YAMLNode
    }

    var overrides: [Override] = []
    var password: Secret?
    var frontendToken: Secret?

    init(environment: [String: String], schema: SectionSchema) throws(ConfigurationError) {
        for variable in environment.keys.sorted() where variable.hasPrefix(Self.prefix) {
            guard let value = environment[variable], !Self.ignoredVariables.contains(variable) else { continue }
            if variable == Self.passwordVariable {
                password = Secret(value)
                continue
            }
            if variable == Self.frontendTokenVariable {
                frontendToken = value.isEmpty ? nil : Secret(value)
                continue
            }
            let name = variable.dropFirst(Self.prefix.count)
            let keys = try Self.resolve(name, in: schema, variable: variable)
            overrides.append(
                Override(
                    variable: variable,
                    keyPath: ConfigurationKeyPath(keys: keys),
                    keys: keys,
                    value: try Self.scalar(value, variable: variable, keyPath: ConfigurationKeyPath(keys: keys))
                )
            )
        }
    }

    /// The variable that set `keyPath` or a key above it, if any.
    func variable(setting keyPath: ConfigurationKeyPath) -> String? {
        overrides.last(where: { keyPath.hasPrefix($0.keyPath) })?.variable
    }

    private static func resolve(
        _ name: Substring,
        in schema: SectionSchema,
        variable: String
    ) throws(ConfigurationError) -> [String] {
        let matches = try keyPaths(named: name, in: schema, path: [], variable: variable)
        guard matches.count == 1, let match = matches.first else {
            let message =
                matches.isEmpty
                ? "names no configuration key (the pattern is WEAR2MQTT_<SECTION>_<KEY>, e.g. WEAR2MQTT_MQTT_HOST)"
                : "is ambiguous: it could set \(matches.map { $0.joined(separator: ".") }.joined(separator: " or "))"
            throw ConfigurationError(source: variable, keyPath: "", message: message)
        }
        return match
    }

    /// Every value key whose upper-cased path, joined with `_`, is `name`. Throws when `name` certainly
    /// means a key that cannot be set this way (a section, a list, the password in the wrong form).
    private static func keyPaths(
        named name: Substring,
        in section: SectionSchema,
        path: [String],
        variable: String
    ) throws(ConfigurationError) -> [[String]] {
        if let rejected = section.rejected.first(where: { name == $0.key.uppercased() }) {
            throw ConfigurationError(
                source: variable, keyPath: ConfigurationKeyPath(keys: path + [rejected.key]).description,
                message: rejected.value)
        }
        var matches: [[String]] = []
        for key in section.keys {
            let upper = key.uppercased()
            guard name == upper || name.hasPrefix(upper + "_") else { continue }
            let keyPath = ConfigurationKeyPath(keys: path + [key])
            switch section.schema(forKey: key) ?? .value {
            case .value:
                if name == upper { matches.append(path + [key]) }
            case .list, .document:
                throw ConfigurationError(
                    source: variable, keyPath: keyPath.description,
                    message: "cannot be set from the environment; write it in the configuration file")
            case .section(let nested):
                if name == upper {
                    let example = nested.keys.first.map { "\(variable)_\($0.uppercased())" } ?? variable
                    throw ConfigurationError(
                        source: variable, keyPath: keyPath.description,
                        message: "is a section, not a key; set one of its keys, e.g. \(example)")
                }
                let rest = name.dropFirst(upper.count + 1)
                matches += try keyPaths(named: rest, in: nested, path: path + [key], variable: variable)
            }
        }
        return matches
    }

    private static func scalar(
        _ text: String,
        variable: String,
        keyPath: ConfigurationKeyPath
    ) throws(ConfigurationError) -> YAMLNode {
        let node: YAMLNode?
        do {
            node = try YAMLComposer.compose(text)
        } catch {
            throw ConfigurationError(
                source: variable, keyPath: keyPath.description,
                message: "cannot read the value as YAML: \(Configuration.yamlProblem(error).problem); "
                    + "quote it with single quotes")
        }
        switch node {
        case nil:
            return YAMLNode("", tag: .null, style: .plain)
        case .scalar(var scalar)?:
            scalar.mark = nil
            return .scalar(scalar)
        case .mapping?, .sequence?:
            throw ConfigurationError(
                source: variable, keyPath: keyPath.description,
                message: "must be a single value; quote it with single quotes if it contains ': ' or starts with '-'")
        }
    }
}

/// The first line of an error's description (some descriptions add detail on further lines).
func firstLine(of error: any Error) -> String {
    String(describing: error).split(separator: "\n", maxSplits: 1).first.map(String.init) ?? "\(error)"
}
