import Testing
import Wear2MQTTTesting

/// `wear2mqtt` refuses a bad configuration before doing anything: exit 1 and one line naming the key.
@Suite struct ConfigurationExitTests {
    func check(_ yaml: String?, command: [String] = ["config", "check"],
               environment: [String: String] = [:]) async throws -> (status: Int32?, stderr: String, stdout: String) {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try yaml.map { try directory.write("config.yaml", $0) } ?? directory.file("missing.yaml")
        return try await GatewayProcess.runToExit(arguments: command + ["--config", path], in: directory,
                                                  environment: environment)
    }

    @Test func anUnknownKeyIsNamedWithItsLine() async throws {
        let result = try await check("mqtt:\n  host: 127.0.0.1\n  hots: typo\n")
        #expect(result.status == 1)
        #expect(result.stderr.contains(":3: mqtt.hots: unknown key"))
    }

    @Test func aWrongTypeIsNamedWithItsLine() async throws {
        let result = try await check("gateway:\n  id: gw\nmqtt:\n  port: not-a-number\n")
        #expect(result.status == 1)
        #expect(result.stderr.contains(":4: mqtt.port"))
    }

    @Test func aMissingFileIsNamed() async throws {
        let result = try await check(nil)
        #expect(result.status == 1)
        #expect(result.stderr.contains("missing.yaml"))
    }

    @Test func wildcardsInTheBaseTopicAreRefused() async throws {
        for topic in ["home/+/w2m", "w2m/#", "a//b", "bad topic"] {
            let result = try await check("mqtt:\n  base_topic: \"\(topic)\"\n")
            #expect(result.status == 1, "base_topic \(topic)")
            #expect(result.stderr.contains(":2: mqtt.base_topic"), "base_topic \(topic)")
        }
    }

    @Test func runRefusesABadConfigurationTheSameWay() async throws {
        let result = try await check("mqtt:\n  keepalive_s: 1\n", command: ["run"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("mqtt.keepalive_s"))
    }

    @Test func anUnusableWebInterfaceCertificateIsNamedByCheckAndByRun() async throws {
        let yaml = "frontend:\n  enabled: true\n  tls:\n    cert_file: /nonexistent/frontend.crt\n    key_file: /nonexistent/frontend.key\n"
        for command in [["config", "check"], ["run"]] {
            let result = try await check(yaml, command: command)
            #expect(result.status == 1, "\(command)")
            #expect(result.stderr.contains("frontend.tls.cert_file: cannot use /nonexistent/frontend.crt"), "\(command): \(result.stderr)")
        }
    }

    @Test func anEnvironmentOverrideWithABadValueNamesTheVariable() async throws {
        let result = try await check("", environment: ["WEAR2MQTT_MQTT_PORT": "99999"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("WEAR2MQTT_MQTT_PORT"))
    }

    @Test func checkPrintsTheResolvedConfigurationWithTheSecretMasked() async throws {
        let result = try await check("mqtt:\n  username: gw\n", environment: ["WEAR2MQTT_MQTT_PASSWORD": "hunter2"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("username: gw"))
        #expect(result.stdout.contains("***"))
        #expect(!result.stdout.contains("hunter2") && !result.stderr.contains("hunter2"))
    }
}
