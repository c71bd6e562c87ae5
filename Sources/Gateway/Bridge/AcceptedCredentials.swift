import Firmware
import FoundationEssentials
import MQTT

/// Remembers, in the state directory, that the broker once accepted this gateway's credentials, so that a later
/// refusal — a broker restarted with its password file half written, an authentication backend that is down —
/// is retried as an outage instead of ending the gateway (exit 3, which systemd does not restart). Only a gateway
/// that never got in with these credentials exits 3.
///
/// The file holds `pbkdf2-sha256$<rounds>$<salt>$<key>`: PBKDF2-HMAC-SHA256 over host, port, user name and
/// password with a random salt drawn when the file is written, never the password. The salt makes each
/// installation's file its own (no table of precomputed guesses fits two of them) and the rounds make each guess
/// cost what a login would; the file is 0600 in the 0700 state directory besides. Changing any of the four makes
/// the next refusal fatal again, until a connection succeeds. A file of the unsalted first version (a bare
/// SHA-256) still counts, and is rewritten salted at the next connection.
public struct AcceptedCredentials: Sendable {
    public let path: String
    /// The four fields, joined as the fingerprint reads them.
    private let secret: [UInt8]

    static let scheme = "pbkdf2-sha256"
    /// A few milliseconds on the build machine's release build (a debug build takes about 70 ms), a few times that
    /// on a Raspberry Pi: paid at start and once a connection.
    static let rounds = 10_000

    public init(_ configuration: Configuration) {
        path = configuration.gateway.stateDirectory + "/mqtt-credentials-accepted"
        let mqtt = configuration.mqtt
        let fields = ["wear2mqtt credentials v1", mqtt.host, String(mqtt.port), mqtt.username ?? "",
                      mqtt.password?.reveal() ?? ""]
        secret = Array(fields.joined(separator: "\u{0}").utf8)
    }

    /// Whether the broker accepted exactly these credentials before.
    public var wereAcceptedBefore: Bool {
        guard let stored = readWholeTextFile(atPath: path)?.trimmingWhitespace() else { return false }
        return matches(stored)
    }

    /// Records a successful connection (once per change: nothing is written when the file already says so in the
    /// salted form).
    public func remember() throws {
        if let stored = readWholeTextFile(atPath: path)?.trimmingWhitespace(),
           stored.hasPrefix(Self.scheme + "$"), matches(stored) { return }
        var salt = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for index in salt.indices { salt[index] = generator.next() }
        try AtomicFile.replace(path, with: Data((Self.line(secret: secret, salt: salt, rounds: Self.rounds) + "\n").utf8))
    }

    static func line(secret: [UInt8], salt: [UInt8], rounds: Int) -> String {
        let key = PBKDF2.sha256(password: secret, salt: salt, rounds: rounds)
        return [scheme, String(rounds), hex(salt), hex(key)].joined(separator: "$")
    }

    /// Compares in constant time what the file says with what these credentials give.
    private func matches(_ stored: String) -> Bool {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        if parts.count == 1 {
            // The first version: SHA-256 in hex over the same four fields.
            return Self.constantTimeEqual(stored, DFUPackageFile.sha256(of: secret))
        }
        guard parts.count == 4, parts[0] == Self.scheme, let rounds = Int(parts[1]), (1...10_000_000).contains(rounds),
              let salt = Self.bytes(hex: parts[2]) else { return false }
        return Self.constantTimeEqual(stored, Self.line(secret: secret, salt: salt, rounds: rounds))
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0 >> 4, radix: 16) + String($0 & 0x0F, radix: 16) }.joined()
    }

    private static func bytes(hex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0, digits.count <= 128 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }

    private static func constantTimeEqual(_ first: String, _ second: String) -> Bool {
        let a = Array(first.utf8), b = Array(second.utf8)
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
