/// A credential that must never reach a log line, a `config check` summary or a crash dump.
///
/// `description`, `debugDescription`, string interpolation and `dump` all print `***`; only ``reveal()``
/// hands out the value, so every place that needs the clear text is easy to find. `Secret` is deliberately
/// not `Codable`: encoding it is always a decision made in code, never a side effect of encoding its owner.
public struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    private let value: String

    public init(_ value: String) {
        self.value = value
    }

    /// The clear text, for the one place that must hand it on (the MQTT connection).
    public func reveal() -> String {
        value
    }

    /// The printable stand-in used wherever the value would otherwise appear.
    public static let mask = "***"

    public var description: String { Self.mask }
    public var debugDescription: String { Self.mask }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
