/// The shape of the configuration document: which keys exist, and which of them hold a section or a list.
///
/// Each section builds its part of the schema from its own `CodingKeys`, so the decoder, the unknown-key
/// check, the `WEAR2MQTT_…` environment resolution and the encoded summary share one list of keys: adding a
/// key to a section's `CodingKeys` makes it known everywhere at once. The schema says nothing about value
/// types or ranges; the sections' decoders check those.
indirect enum ConfigurationSchema: Sendable {
    /// A single scalar value.
    case value
    /// A mapping of known keys.
    case section(SectionSchema)
    /// A YAML sequence whose items all have the same shape. Lists cannot be set from the environment.
    case list(of: ConfigurationSchema)
    /// A free-form mapping a driver checks (`devices[].configure`); not settable from the environment.
    case document
}

struct SectionSchema: Sendable {
    /// The keys a file may set, in the order of the section's `CodingKeys`.
    var keys: [String]
    /// The schema of each key that does not hold a single value.
    var nested: [String: ConfigurationSchema]
    /// Keys the section knows but a file must not set, with what to do instead.
    var rejected: [String: String]

    func schema(forKey key: String) -> ConfigurationSchema? {
        guard keys.contains(key) else { return nil }
        return nested[key] ?? .value
    }
}

/// A mapping in the configuration file, decoded from a YAML mapping whose keys are exactly `CodingKeys`.
protocol ConfigurationSection: Decodable {
    associatedtype CodingKeys: CodingKey & CaseIterable
    /// Keys holding a nested section or list; every other key holds a single value.
    static var nestedSchemas: [String: ConfigurationSchema] { get }
    /// Keys of `CodingKeys` that a file must not set (they are encoded in summaries only), and why.
    static var rejectedKeys: [String: String] { get }
}

extension ConfigurationSection {
    static var nestedSchemas: [String: ConfigurationSchema] { [:] }
    static var rejectedKeys: [String: String] { [:] }

    static var schema: ConfigurationSchema {
        .section(sectionSchema)
    }

    static var sectionSchema: SectionSchema {
        let rejected = rejectedKeys
        return SectionSchema(
            keys: CodingKeys.allCases.map(\.stringValue).filter { rejected[$0] == nil },
            nested: nestedSchemas,
            rejected: rejected
        )
    }
}
