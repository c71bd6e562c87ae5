import Foundation

/// The tools from PyPI that tests run, each where `deploy/prerequisites suite` (which the README's test command,
/// `Tests/run`, calls first) puts it: venvs under the checkout's `.build/tools`, made by Debian's own python3, so
/// the tests never depend on whatever `python3` PATH happens to find. A missing tool is an error naming the one
/// command that installs it, so a test that needs it fails instead of passing without it.
public enum TestTools {
    /// The checkout this file is in.
    public static let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// The interpreter of `.build/tools/python`: bleak, prometheus-client, paho-mqtt and adafruit-nrfutil.
    public static var python: String { checkout + "/.build/tools/python/bin/python" }
    /// Adafruit's nrfutil 0.5 fork, in the same venv.
    public static var adafruitNrfutil: String { checkout + "/.build/tools/python/bin/adafruit-nrfutil" }
    /// Nordic's nrfutil 6.1.7, in a venv of its own (it shares the `nordicsemi` package name with Adafruit's).
    public static var nordicNrfutil: String { checkout + "/.build/tools/nrfutil/bin/nrfutil" }

    /// What to run when a tool is missing.
    public static let installCommand = "deploy/prerequisites suite (the README's test command, Tests/run, runs it first)"

    public struct Missing: Error, CustomStringConvertible {
        public let description: String
    }

    /// `path` when it is an executable file, else the error that says how to install it.
    public static func require(_ path: String) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw Missing(description: "\(path) is not installed: run \(installCommand)")
        }
        return path
    }
}
