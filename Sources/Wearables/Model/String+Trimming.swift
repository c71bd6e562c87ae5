extension StringProtocol {
    /// Without leading and trailing whitespace and line breaks (a key pasted or read from a file, a model name):
    /// Foundation's `trimmingCharacters(in:)`, which FoundationEssentials does not have.
    public func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }
}
