import Gateway

extension FuzzTarget {
    /// The configuration file as the gateway loads it: YAML (the system libyaml), the schema check, and
    /// every section's validation. Errors are the typed `ConfigurationError`; nothing else may happen.
    static let configuration = FuzzTarget(
        name: "config",
        summary: "config.yaml: YAML syntax, the schema, every section's validation"
    ) { bytes in
        // A password file would be read from the working directory: the fuzzer must not make that depend on it.
        let text = String(decoding: bytes, as: UTF8.self).replacing("password_file", with: "password_fil")
        _ = try? Configuration.parse(yaml: text)
    }
}
