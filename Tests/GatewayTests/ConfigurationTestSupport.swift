import Foundation
import Testing

@testable import Gateway

/// Parses `yaml` and returns the error it must produce; records an issue if it parses.
func configurationError(
    _ yaml: String,
    environment: [String: String] = [:],
    sourceLocation: SourceLocation = #_sourceLocation
) -> ConfigurationError? {
    do {
        let configuration = try Configuration.parse(yaml: yaml, source: "config.yaml", environment: environment)
        Issue.record("expected a configuration error, got \(configuration)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// A directory of its own under the system temporary directory, removed by `body`'s end.
func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("wear2mqtt-config-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory)
}

/// The reference configuration at the package root.
let referenceConfigurationPath = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()  // GatewayTests
    .deletingLastPathComponent()  // Tests
    .deletingLastPathComponent()  // package root
    .appendingPathComponent("config.yaml")
    .path
