/// A number of seconds or megabytes in the `config check` summary, written the way people write it (`1.0`, `0.5`):
/// the YAML encoder writes a `Double` as Swift describes it, which this wrapper names at the places that rely on it.
struct DecimalNumber: Encodable {
    var value: Double

    init(_ value: Double) {
        self.value = value
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}
