import Foundation
import Testing

@testable import Gateway

@Suite("Environment overrides")
struct EnvironmentOverrideTests {
    @Test("WEAR2MQTT_<SECTION>_<KEY> overrides the file, with YAML scalar types")
    func overridesFile() throws {
        let configuration = try Configuration.parse(
            yaml: "mqtt:\n  host: from-file\n  port: 1883\n",
            environment: [
                "WEAR2MQTT_MQTT_HOST": "broker",
                "WEAR2MQTT_MQTT_PORT": "8883",
                "WEAR2MQTT_GATEWAY_LOG_LEVEL": "debug",
                "WEAR2MQTT_GATEWAY_STATE_DIR": "/srv/w2m",
                "WEAR2MQTT_ALLOW_DFU": "true",
                "PATH": "/usr/bin",
            ]
        )
        #expect(configuration.mqtt.host == "broker")
        #expect(configuration.mqtt.port == 8883)
        #expect(configuration.gateway.logLevel == .debug)
        #expect(configuration.gateway.stateDirectory == "/srv/w2m")
        #expect(configuration.allow.dfu)
    }

    @Test("nested keys resolve against the schema despite underscores in key names")
    func nestedOverrides() throws {
        let configuration = try Configuration.parse(
            yaml: "",
            environment: [
                "WEAR2MQTT_MQTT_TLS_ENABLED": "true",
                "WEAR2MQTT_MQTT_TLS_CA_FILE": "/x",
                "WEAR2MQTT_MQTT_TLS_MIN_VERSION": "1.3",
                "WEAR2MQTT_MQTT_RECONNECT_MAX_DELAY_S": "5",
                "WEAR2MQTT_MQTT_SPOOL_MAX_MB": "0.5",
                "WEAR2MQTT_BLUEZ_BUS": "unix:path=/run/x",
            ]
        )
        #expect(configuration.mqtt.tls.enabled)
        #expect(configuration.mqtt.tls.caFile == "/x")
        #expect(configuration.mqtt.tls.minimumVersion == .tls13)
        #expect(configuration.mqtt.reconnect.maxDelaySeconds == 5)
        #expect(configuration.mqtt.spool.maxMegabytes == 0.5)
        #expect(configuration.bluez.bus == .address("unix:path=/run/x"))
    }

    @Test("an empty value means the default")
    func emptyValue() throws {
        let configuration = try Configuration.parse(
            yaml: "mqtt: {client_id: fixed}", environment: ["WEAR2MQTT_MQTT_CLIENT_ID": ""])
        #expect(configuration.mqtt.clientID == nil)
        #expect(configuration.mqtt.effectiveClientID == "wear2mqtt-wear2mqtt")
    }

    @Test(
        "a variable that names no key is an error naming the variable",
        arguments: ["WEAR2MQTT_MQTT_HOTS", "WEAR2MQTT_HOST", "WEAR2MQTT_MQTT_TLS_CAFILE", "WEAR2MQTT_mqtt_host", "WEAR2MQTT_"]
    )
    func unknownVariable(variable: String) {
        let error = configurationError("", environment: [variable: "x"])
        #expect(error?.source == variable)
        #expect(error?.line == nil)
        #expect(error?.message.contains("names no configuration key") == true)
    }

    @Test("a section or a list cannot be set from the environment")
    func sectionsAndLists() {
        let section = configurationError("", environment: ["WEAR2MQTT_MQTT_TLS": "x"])
        #expect(section?.keyPath == "mqtt.tls")
        #expect(section?.message.contains("WEAR2MQTT_MQTT_TLS_ENABLED") == true)
        let list = configurationError("", environment: ["WEAR2MQTT_DEVICES": "[]"])
        #expect(list?.keyPath == "devices")
        #expect(list?.source == "WEAR2MQTT_DEVICES")
    }

    @Test("a bad overridden value is blamed on the variable, not the file")
    func badOverriddenValue() {
        let error = configurationError("mqtt:\n  port: 1883\n", environment: ["WEAR2MQTT_MQTT_PORT": "70000"])
        #expect(error?.description == "WEAR2MQTT_MQTT_PORT: mqtt.port: must be between 1 and 65535, got 70000")
        let type = configurationError("", environment: ["WEAR2MQTT_MQTT_KEEPALIVE_S": "soon"])
        #expect(type?.source == "WEAR2MQTT_MQTT_KEEPALIVE_S")
        #expect(type?.keyPath == "mqtt.keepalive_s")
        #expect(type?.line == nil)
        let structure = configurationError("", environment: ["WEAR2MQTT_MQTT_HOST": "a: b"])
        #expect(structure?.source == "WEAR2MQTT_MQTT_HOST")
        #expect(structure?.message.contains("single value") == true)
    }

    @Test("a file value still gets its line when another key is overridden")
    func fileErrorBesideOverride() {
        let error = configurationError("mqtt:\n  host: a\n  port: 0\n", environment: ["WEAR2MQTT_MQTT_HOST": "b"])
        #expect(error?.source == "config.yaml")
        #expect(error?.line == 3)
    }

    @Test("WEAR2MQTT_CONFIG is left to the command line")
    func configVariableIgnored() throws {
        #expect(try Configuration.parse(yaml: "", environment: ["WEAR2MQTT_CONFIG": "/etc/w2m.yaml"]) == Configuration())
    }
}

@Suite("Password")
struct PasswordTests {
    @Test("a password key in the file is refused with where to put it instead")
    func passwordInFile() {
        let error = configurationError("mqtt:\n  username: u\n  password: hunter2\n")
        #expect(error?.keyPath == "mqtt.password")
        #expect(error?.line == 3)
        #expect(error?.message.contains("password_file") == true)
        #expect(error?.message.contains("WEAR2MQTT_MQTT_PASSWORD") == true)
        #expect(error?.description.contains("hunter2") == false)
    }

    @Test("WEAR2MQTT_MQTT_PASSWORD supplies the password verbatim")
    func passwordFromEnvironment() throws {
        let configuration = try Configuration.parse(
            yaml: "mqtt: {username: u}", environment: ["WEAR2MQTT_MQTT_PASSWORD": "#not: yaml"])
        #expect(configuration.mqtt.password?.reveal() == "#not: yaml")
    }

    @Test("password_file is read at load time, without its trailing newline")
    func passwordFromFile() throws {
        try withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("password").path
            try "s3cret pass\n".write(toFile: file, atomically: true, encoding: .utf8)
            let configuration = try Configuration.parse(yaml: "mqtt:\n  password_file: \(file)\n")
            #expect(configuration.mqtt.password?.reveal() == "s3cret pass")
            #expect(configuration.mqtt.passwordFile == file)

            let fromEnvironment = try Configuration.parse(
                yaml: "mqtt:\n  password_file: \(file)\n", environment: ["WEAR2MQTT_MQTT_PASSWORD": "env"])
            #expect(fromEnvironment.mqtt.password?.reveal() == "env")
        }
    }

    @Test("an unreadable or empty password file names mqtt.password_file")
    func unreadablePasswordFile() throws {
        try withTemporaryDirectory { directory in
            let missing = directory.appendingPathComponent("missing").path
            let error = configurationError("mqtt:\n  username: u\n  password_file: \(missing)\n")
            #expect(error?.keyPath == "mqtt.password_file")
            #expect(error?.line == 3)
            #expect(error?.message.contains(missing) == true)

            let empty = directory.appendingPathComponent("empty").path
            try "\n".write(toFile: empty, atomically: true, encoding: .utf8)
            let emptyError = configurationError("", environment: ["WEAR2MQTT_MQTT_PASSWORD_FILE": empty])
            #expect(emptyError?.source == "WEAR2MQTT_MQTT_PASSWORD_FILE")
            #expect(emptyError?.message.contains("empty") == true)
        }
    }

    @Test("the password never appears in the summary, descriptions or dumps")
    func passwordNeverShown() throws {
        try withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("password").path
            try "file-secret-4711\n".write(toFile: file, atomically: true, encoding: .utf8)
            for environment in [[:], ["WEAR2MQTT_MQTT_PASSWORD": "env-secret-4711"]] {
                let configuration = try Configuration.parse(
                    yaml: "mqtt:\n  password_file: \(file)\n", environment: environment)
                let secret = try #require(configuration.mqtt.password).reveal()
                var dumped = ""
                dump(configuration, to: &dumped)
                for text in [
                    configuration.resolvedSummary(), "\(configuration)", String(reflecting: configuration), dumped,
                    configuration.bridgeInfoSummary.description,
                ] {
                    #expect(!text.contains(secret))
                }
                #expect(configuration.resolvedSummary().contains("password: '***'")
                    || configuration.resolvedSummary().contains("password: \"***\""))
                #expect(configuration.resolvedSummary(maskSecrets: false).contains(secret))
            }
        }
    }
}
