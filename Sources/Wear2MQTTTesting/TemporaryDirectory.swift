import Foundation

/// A fresh directory under the system temp dir, unique per call so tests can run in parallel and twice in a
/// row. Removed by `remove()`.
public struct TemporaryDirectory: Sendable {
    public let path: String

    public init(prefix: String = "wear2mqtt-test") throws {
        let base = FileManager.default.temporaryDirectory.path
        path = "\(base)/\(prefix)-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    public func file(_ name: String) -> String { "\(path)/\(name)" }

    public func write(_ name: String, _ text: String) throws -> String {
        let target = file(name)
        try text.write(toFile: target, atomically: true, encoding: .utf8)
        return target
    }

    public func remove() { try? FileManager.default.removeItem(atPath: path) }
}
