import Yams

/// A number of seconds or megabytes, encoded in YAML the way people write it (`1.0`, `0.5`) rather than
/// the way Yams writes doubles by default (`1e+0`), so the `config check` summary reads like the reference.
struct DecimalNumber: Encodable, YAMLEncodable {
    var value: Double

    init(_ value: Double) {
        self.value = value
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }

    func box() -> Node {
        Node(value.description, Tag(.float))
    }
}
