import Firmware
import Foundation
import MQTT

/// Remembers, in the state directory, that the broker once accepted this gateway's credentials, so that a later
/// refusal — a broker restarted with its password file half written, an authentication backend that is down —
/// is retried as an outage instead of ending the gateway (exit 3, which systemd does not restart). Only a gateway
/// that never got in with these credentials exits 3.
///
/// The file holds a SHA-256 over host, port, user name and password, never the password; it is 0600 in the
/// 0700 state directory. Changing any of the four makes the next refusal fatal again, until a connection succeeds.
public struct AcceptedCredentials: Sendable {
    public let path: String
    let fingerprint: String

    public init(_ configuration: Configuration) {
        path = configuration.gateway.stateDirectory + "/mqtt-credentials-accepted"
        let mqtt = configuration.mqtt
        let fields = ["wear2mqtt credentials v1", mqtt.host, String(mqtt.port), mqtt.username ?? "",
                      mqtt.password?.reveal() ?? ""]
        // The SHA-256 in hex that firmware files are checked with; here over the four fields.
        fingerprint = DFUPackageFile.sha256(of: Array(fields.joined(separator: "\u{0}").utf8))
    }

    /// Whether the broker accepted exactly these credentials before.
    public var wereAcceptedBefore: Bool {
        readWholeTextFile(atPath: path)?.trimmingCharacters(in: .whitespacesAndNewlines) == fingerprint
    }

    /// Records a successful connection (once per change: nothing is written when the file already says so).
    public func remember() throws {
        guard !wereAcceptedBefore else { return }
        try AtomicFile.replace(path, with: Data((fingerprint + "\n").utf8))
    }
}
