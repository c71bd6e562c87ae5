/// Why a text is not one readable YAML document, with libyaml's own words and positions.
public enum YAMLError: Error, Sendable, CustomStringConvertible {
    /// The bytes are not text libyaml accepts (a control character, for example), at a byte offset.
    case reader(problem: String, offset: Int)
    /// A syntax error; `context` is what libyaml was reading when it found the problem, and where that began.
    case syntax(problem: String, mark: YAMLMark, context: (text: String, mark: YAMLMark)?)
    /// A mapping that names keys more than once; `mark` is where the first of them first appears.
    case duplicatedKeys([String], mark: YAMLMark)

    public var description: String {
        switch self {
        case .reader(let problem, let offset): "byte \(offset): \(problem)"
        case .syntax(let problem, let mark, let context):
            "\(mark.line):\(mark.column): \(problem)" + (context.map { " (\($0.text) at line \($0.mark.line))" } ?? "")
        case .duplicatedKeys(let keys, let mark): "\(mark.line):\(mark.column): duplicated keys \(keys.joined(separator: ", "))"
        }
    }
}
