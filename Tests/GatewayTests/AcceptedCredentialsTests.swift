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
        #expect(!stored.contains("s3cret") && stored.count == 65)
        var status = stat()
        #expect(stat(accepted.path, &status) == 0 && status.st_mode & 0o777 == 0o600)
    }
}
