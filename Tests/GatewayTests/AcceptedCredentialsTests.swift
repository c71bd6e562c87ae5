import Firmware
import Foundation
import Testing
import Wear2MQTTTesting

@testable import Gateway

/// Issue 24: a broker that refuses credentials it accepted before is an outage, not a reason to stop for good.
@Suite("Credentials the broker accepted")
struct AcceptedCredentialsTests {
    static func configuration(_ directory: TemporaryDirectory, host: String = "broker.lan", port: Int = 1883,
                              user: String? = "gateway", password: String? = "s3cret") throws -> Configuration {
        var yaml = "gateway: {state_dir: \"\(directory.path)\"}\nmqtt: {host: \(host), port: \(port)"
        if let user { yaml += ", username: \(user)" }
        return try Configuration.parse(yaml: yaml + "}", environment: password.map { ["WEAR2MQTT_MQTT_PASSWORD": $0] } ?? [:])
    }

    @Test("remembered once connected; any change of host, port, user or password forgets it; the password is not stored")
    func remembersExactlyTheseCredentials() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let accepted = AcceptedCredentials(try Self.configuration(directory))
        #expect(!accepted.wereAcceptedBefore)
        try accepted.remember()
        #expect(AcceptedCredentials(try Self.configuration(directory)).wereAcceptedBefore)
        for changed in [try Self.configuration(directory, host: "other.lan"), try Self.configuration(directory, port: 1884),
                        try Self.configuration(directory, user: "someone"), try Self.configuration(directory, password: "s3cret2"),
                        try Self.configuration(directory, user: nil, password: nil)] {
            #expect(!AcceptedCredentials(changed).wereAcceptedBefore)
        }
        let stored = try String(contentsOfFile: accepted.path, encoding: .utf8)
        #expect(!stored.contains("s3cret") && stored.hasPrefix("pbkdf2-sha256$10000$"))
        var status = stat()
        #expect(stat(accepted.path, &status) == 0 && status.st_mode & 0o777 == 0o600)
    }

    @Test("salted per installation: two state folders with the same credentials hold different files, each accepted")
    func saltedPerInstallation() throws {
        let first = try TemporaryDirectory(), second = try TemporaryDirectory()
        defer { first.remove(); second.remove() }
        let a = AcceptedCredentials(try Self.configuration(first)), b = AcceptedCredentials(try Self.configuration(second))
        try a.remember()
        try b.remember()
        let fileA = try String(contentsOfFile: a.path, encoding: .utf8), fileB = try String(contentsOfFile: b.path, encoding: .utf8)
        #expect(fileA != fileB)
        #expect(fileA.split(separator: "$").count == 4 && fileA.split(separator: "$")[2].count == 32)
        #expect(a.wereAcceptedBefore && b.wereAcceptedBefore)
        // Remembering again keeps the file as it is (no rewrite per connection).
        try a.remember()
        #expect(try String(contentsOfFile: a.path, encoding: .utf8) == fileA)
    }

    @Test("a file of the unsalted first version still counts, and the next connection rewrites it salted")
    func migratesTheUnsaltedFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let configuration = try Self.configuration(directory)
        let accepted = AcceptedCredentials(configuration)
        // What the first version wrote: SHA-256 in hex over the four fields joined by NUL.
        let fields = ["wear2mqtt credentials v1", "broker.lan", "1883", "gateway", "s3cret"].joined(separator: "\u{0}")
        let unsalted = DFUPackageFile.sha256(of: Array(fields.utf8))
        try (unsalted + "\n").write(toFile: accepted.path, atomically: true, encoding: .utf8)
        #expect(accepted.wereAcceptedBefore)
        #expect(!AcceptedCredentials(try Self.configuration(directory, password: "other")).wereAcceptedBefore)
        try accepted.remember()
        let stored = try String(contentsOfFile: accepted.path, encoding: .utf8)
        #expect(stored.hasPrefix("pbkdf2-sha256$") && !stored.contains(unsalted))
        #expect(accepted.wereAcceptedBefore)
    }

    @Test("a damaged file counts as never accepted", arguments: [
        "", "pbkdf2-sha256$", "pbkdf2-sha256$0$00$00", "pbkdf2-sha256$10000$zz$00", "md5$1$00$00", "pbkdf2-sha256$99999999999$00$00",
    ])
    func damagedFile(_ content: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let accepted = AcceptedCredentials(try Self.configuration(directory))
        try content.write(toFile: accepted.path, atomically: true, encoding: .utf8)
        #expect(!accepted.wereAcceptedBefore)
    }

    /// RFC 7914, section 11 (PBKDF2-HMAC-SHA256 test vectors), the first 32 bytes of each.
    @Test("PBKDF2-HMAC-SHA256 gives RFC 7914's vectors")
    func pbkdf2Vectors() {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(PBKDF2.sha256(password: Array("passwd".utf8), salt: Array("salt".utf8), rounds: 1))
                == "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc")
        #expect(hex(PBKDF2.sha256(password: Array("Password".utf8), salt: Array("NaCl".utf8), rounds: 80_000))
                == "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56")
    }
}
