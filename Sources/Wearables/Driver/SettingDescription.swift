/// One setting a driver's devices have, described so a user interface (Home Assistant's number, select and switch
/// entities) offers exactly what the driver's own validation accepts: nothing it could send would be refused.
public struct SettingDescription: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// A whole number in `range`, in `unit`.
        case number(range: ClosedRange<Int64>, step: Int64, unit: String?)
        /// One of `options`, as the request writes them.
        case choice(options: [String])
        /// One of a few whole numbers (a Bose sensor period), written as a number.
        case numberChoice(options: [Int64], unit: String?)
        case toggle
    }

    /// A stable key for it (`step_goal`, `gesture_double_tap`).
    public var key: String
    /// A name for people: "Step goal".
    public var name: String
    public var kind: Kind
    /// The command that changes it (`settings`, `configure`).
    public var command: String
    /// Where the value goes in that command's request object (`["step_goal"]`, `["gestures", "double_tap"]`).
    public var requestPath: [String]
    /// Where the device's state document shows it (`["settings", "step_goal"]`).
    public var statePath: [String]

    public init(_ key: String, name: String, kind: Kind, command: String = "settings", requestPath: [String]? = nil,
                statePath: [String]? = nil) {
        self.key = key
        self.name = name
        self.kind = kind
        self.command = command
        self.requestPath = requestPath ?? [key]
        self.statePath = statePath ?? ["settings", key]
    }
}
