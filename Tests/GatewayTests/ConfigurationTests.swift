import Foundation
import Logging
import Testing

@testable import Gateway

@Suite("Configuration file")
struct ConfigurationTests {
    @Test("the reference config.yaml loads and states exactly the defaults")
    func referenceFileIsTheDefaults() throws {
        let configuration = try Configuration.load(path: referenceConfigurationPath, environment: [:])
        #expect(configuration == Configuration())
    }

    @Test("the reference config.yaml mentions every key of the schema")
    func referenceFileMentionsEveryKey() throws {
        let text = try String(contentsOfFile: referenceConfigurationPath, encoding: .utf8)
        func keys(_ schema: ConfigurationSchema, prefix: String) -> [String] {
            guard case .section(let section) = schema else { return [] }
            return section.keys.flatMap { key -> [String] in
                switch section.nested[key] {
                case .section?: [key] + keys(section.nested[key]!, prefix: key)
                case .list(let item)?: [key] + keys(item, prefix: key)
                default: [key]
                }
            }
        }
        for key in keys(Configuration.schema, prefix: "") {
            #expect(text.contains("\(key):"), "config.yaml does not document \(key)")
        }
    }

    @Test("an empty file and a file of comments give the defaults", arguments: ["", "\n", "# nothing here\n  # at all\n"])
    func emptyFileIsDefaults(yaml: String) throws {
        #expect(try Configuration.parse(yaml: yaml) == Configuration())
    }

    @Test("the defaults are the documented ones")
    func defaults() {
        let configuration = Configuration()
        #expect(configuration.gateway.id == "wear2mqtt")
        #expect(configuration.gateway.stateDirectory == "/var/lib/wear2mqtt")
        #expect(configuration.gateway.logLevel == .info)
        #expect(configuration.gateway.logFormat == .logfmt)
        #expect(configuration.mqtt.host == "127.0.0.1")
        #expect(configuration.mqtt.port == 1883)
        #expect(configuration.mqtt.baseTopic == "wear2mqtt")
        #expect(configuration.mqtt.effectiveClientID == "wear2mqtt-wear2mqtt")
        #expect(configuration.mqtt.protocolVersion == .v5)
        #expect(configuration.mqtt.keepaliveSeconds == 60)
        #expect(configuration.mqtt.reconnect.minDelaySeconds == 0.5)
        #expect(configuration.mqtt.reconnect.maxDelaySeconds == 1)
        #expect(configuration.mqtt.spool.maxBytes == 64 * 1_048_576)
        #expect(configuration.mqtt.spool.memoryMessages == 10_000)
        #expect(configuration.bluez.bus == .system)
        #expect(configuration.devices.isEmpty)
        #expect(!configuration.allow.clearData && !configuration.allow.factoryReset && !configuration.allow.dfu)
        #expect(configuration.dfu.directory == "/var/lib/wear2mqtt/firmware")
        #expect(configuration.dfu.maxBytes == 16 * 1_048_576)
    }

    @Test("every key is read from the file")
    func fullFile() throws {
        let configuration = try Configuration.parse(
            yaml: """
                gateway: {id: lab-1, state_dir: /tmp/w2m, log_level: DEBUG, log_format: json}
                mqtt:
                  host: broker.local
                  port: 8883
                  base_topic: home/wearables
                  protocol: 3.1.1
                  username: gateway
                  keepalive_s: 30
                  tls: {enabled: true, ca_file: /ca.pem, cert_file: /c.pem, key_file: /k.pem, min_version: 1.3, insecure: true}
                  reconnect: {min_delay_s: 0.5, max_delay_s: 5}
                  spool: {max_mb: 0.5, memory_messages: 1}
                bluez: {bus: "unix:path=/run/sim/bus", adapter: "aa:bb:cc:dd:ee:0f"}
                devices:
                  - address: c8:0f:10:aa:bb:cc
                    name: left_wrist
                    driver: gofit
                  - {address: "C8:0F:10:AA:BB:CD"}
                allow: {clear_data: true, factory_reset: yes, dfu: true}
                dfu: {dir: /srv/firmware, max_mb: 2.5}
                """
        )
        #expect(configuration.gateway.id == "lab-1")
        #expect(configuration.gateway.stateDirectory == "/tmp/w2m")
        #expect(configuration.gateway.logLevel == .debug)
        #expect(configuration.gateway.logFormat == .json)
        #expect(configuration.mqtt.host == "broker.local")
        #expect(configuration.mqtt.port == 8883)
        #expect(configuration.mqtt.baseTopic == "home/wearables")
        #expect(configuration.mqtt.effectiveClientID == "wear2mqtt-lab-1")
        #expect(configuration.mqtt.protocolVersion == .v311)
        #expect(configuration.mqtt.username == "gateway")
        #expect(configuration.mqtt.password == nil)
        #expect(configuration.mqtt.keepaliveSeconds == 30)
        #expect(configuration.mqtt.tls.enabled)
        #expect(configuration.mqtt.tls.caFile == "/ca.pem")
        #expect(configuration.mqtt.tls.certificateFile == "/c.pem")
        #expect(configuration.mqtt.tls.keyFile == "/k.pem")
        #expect(configuration.mqtt.tls.minimumVersion == .tls13)
        #expect(configuration.mqtt.tls.insecure)
        #expect(configuration.mqtt.reconnect.minDelaySeconds == 0.5)
        #expect(configuration.mqtt.reconnect.maxDelaySeconds == 5)
        #expect(configuration.mqtt.spool.maxBytes == 524_288)
        #expect(configuration.mqtt.spool.memoryMessages == 1)
        #expect(configuration.bluez.bus == .address("unix:path=/run/sim/bus"))
        #expect(configuration.bluez.adapter == "AA:BB:CC:DD:EE:0F")
        #expect(
            configuration.devices == [
                .init(address: "C8:0F:10:AA:BB:CC", name: "left_wrist", driver: "gofit"),
                .init(address: "C8:0F:10:AA:BB:CD"),
            ])
        #expect(configuration.allow.clearData && configuration.allow.factoryReset && configuration.allow.dfu)
        #expect(configuration.dfu.directory == "/srv/firmware")
        #expect(configuration.dfu.maxBytes == 2_621_440)
    }

    @Test("protocol accepts the number 5 and the strings \"5\" and \"3.1.1\"")
    func protocolSpellings() throws {
        #expect(try Configuration.parse(yaml: "mqtt: {protocol: 5}").mqtt.protocolVersion == .v5)
        #expect(try Configuration.parse(yaml: "mqtt: {protocol: \"5\"}").mqtt.protocolVersion == .v5)
        #expect(try Configuration.parse(yaml: "mqtt: {protocol: \"3.1.1\"}").mqtt.protocolVersion == .v311)
        let error = configurationError("mqtt:\n  protocol: 4\n")
        #expect(error?.keyPath == "mqtt.protocol")
        #expect(error?.line == 2)
        #expect(error?.message.contains("5, 3.1.1") == true)
    }

    @Test("an explicit client_id replaces the derived one")
    func explicitClientID() throws {
        let configuration = try Configuration.parse(yaml: "gateway: {id: a}\nmqtt: {client_id: my-client}")
        #expect(configuration.mqtt.effectiveClientID == "my-client")
        var derived = try Configuration.parse(yaml: "gateway: {id: a}")
        #expect(derived.mqtt.effectiveClientID == "wear2mqtt-a")
        derived.gateway.id = "b"
        #expect(derived.mqtt.effectiveClientID == "wear2mqtt-b")
    }

    @Test("an empty section means its defaults")
    func emptySection() throws {
        #expect(try Configuration.parse(yaml: "gateway:\nmqtt:\n  tls:\ndevices:\n") == Configuration())
    }

    // MARK: Unknown keys

    @Test("an unknown top-level key names itself, its line, and the known keys")
    func unknownTopLevelKey() {
        let error = configurationError("gateway:\n  id: x\nmqqt:\n  host: a\n")
        #expect(error?.keyPath == "mqqt")
        #expect(error?.line == 3)
        #expect(error?.message.contains("did you mean mqtt?") == true)
        #expect(error?.message.contains("known: gateway, mqtt, bluez, devices, allow") == true)
    }

    @Test("an unknown key in a section is reported in compiler style")
    func unknownSectionKey() {
        let yaml = """
            # broker
            gateway:
              id: x

            mqtt:
              port: 1883
              hots: broker
            """
        let error = configurationError(yaml)
        #expect(error?.description.hasPrefix("config.yaml:7: mqtt.hots: unknown key") == true)
        #expect(error?.message.contains("did you mean host?") == true)
        #expect(error?.message.contains("known: host, port, base_topic") == true)
        #expect(error?.source == "config.yaml")
    }

    @Test("an unknown key nested in tls has the full key path")
    func unknownNestedKey() {
        let error = configurationError("mqtt:\n  tls:\n    enabled: true\n    cafile: /ca.pem\n")
        #expect(error?.keyPath == "mqtt.tls.cafile")
        #expect(error?.line == 4)
        #expect(error?.message.contains("did you mean ca_file?") == true)
    }

    @Test("an unknown key in a device entry names the entry")
    func unknownDeviceKey() {
        let error = configurationError("devices:\n  - address: AA:BB:CC:DD:EE:FF\n  - address: AA:BB:CC:DD:EE:00\n    nmae: x\n")
        #expect(error?.keyPath == "devices[1].nmae")
        #expect(error?.line == 4)
    }

    @Test("a section given a value instead of keys is an error")
    func sectionAsScalar() {
        let error = configurationError("mqtt: broker.local\n")
        #expect(error?.keyPath == "mqtt")
        #expect(error?.line == 1)
        #expect(error?.message.contains("expected a section of keys") == true)
    }

    // MARK: Wrong values

    @Test("a port that is not a number names mqtt.port and its line")
    func wrongType() {
        let error = configurationError("mqtt:\n  host: a\n  port: abc\n")
        #expect(error?.keyPath == "mqtt.port")
        #expect(error?.line == 3)
        #expect(error?.message.contains("expected a whole number, got \"abc\"") == true)
    }

    @Test("a quoted number is text, and the message says so")
    func quotedNumber() {
        let error = configurationError("mqtt:\n  port: \"8883\"\n")
        #expect(error?.keyPath == "mqtt.port")
        #expect(error?.line == 2)
        #expect(error?.message.contains("remove the quotes") == true)
    }

    @Test("a list where a value belongs is an error")
    func listForValue() {
        let error = configurationError("mqtt:\n  host: [a, b]\n")
        #expect(error?.keyPath == "mqtt.host")
        #expect(error?.message.contains("expected a single value, got a list") == true)
    }

    @Test(
        "values out of range name the key and the line",
        arguments: [
            ("mqtt:\n  port: 70000\n", "mqtt.port", 2, "between 1 and 65535"),
            ("mqtt:\n  port: 0\n", "mqtt.port", 2, "between 1 and 65535"),
            ("mqtt:\n  keepalive_s: 1\n", "mqtt.keepalive_s", 2, "between 5 and 65535"),
            ("mqtt:\n  session_expiry_s: 4294967296\n", "mqtt.session_expiry_s", 2, "between 0 and 4294967295"),
            ("mqtt:\n  reconnect:\n    min_delay_s: 0\n", "mqtt.reconnect.min_delay_s", 3, "greater than 0"),
            ("mqtt:\n  reconnect: {min_delay_s: 10, max_delay_s: 5}\n", "mqtt.reconnect.min_delay_s", 2, "must not exceed"),
            ("mqtt:\n  spool:\n    max_mb: 0\n", "mqtt.spool.max_mb", 3, "greater than 0"),
            ("mqtt:\n  spool:\n    max_mb: .inf\n", "mqtt.spool.max_mb", 3, "greater than 0"),
            ("mqtt:\n  spool:\n    memory_messages: 0\n", "mqtt.spool.memory_messages", 3, "between 1 and"),
            ("gateway:\n  log_level: verbose\n", "gateway.log_level", 2, "trace, debug, info, notice, warning, error, critical"),
            ("gateway:\n  log_format: text\n", "gateway.log_format", 2, "logfmt, json"),
            ("gateway:\n  id: my gateway\n", "gateway.id", 2, "may only contain"),
            ("gateway:\n  id: \(String(repeating: "x", count: 65))\n", "gateway.id", 2, "at most 64"),
            ("mqtt:\n  protocol: 3.1.1\n  session_expiry_s: 60\n", "mqtt.session_expiry_s", 3, "protocol: 5"),
            ("mqtt:\n  client_id: \"\"\n", "mqtt.client_id", 2, "must not be empty"),
            ("mqtt:\n  client_id: \"a\\tb\"\n", "mqtt.client_id", 2, "control characters"),
            ("mqtt:\n  tls:\n    enabled: maybe\n", "mqtt.tls.enabled", 3, "true or false"),
            ("bluez:\n  bus: tcp\n", "bluez.bus", 2, "must be system, session or a D-Bus address"),
            ("dfu:\n  max_mb: 2048\n", "dfu.max_mb", 2, "greater than 0 and at most 1024"),
            ("dfu:\n  dir: \"\"\n", "dfu.dir", 2, "must not be empty"),
            ("bluez:\n  adapter: hci\n", "bluez.adapter", 2, "hci0"),
            ("homeassistant:\n  discovery_prefix: \"ha/#\"\n", "homeassistant.discovery_prefix", 2, "wildcards"),
            ("homeassistant:\n  status_topic: \"\"\n", "homeassistant.status_topic", 2, "must not be empty"),
            ("homeassistant:\n  state_interval_s: 0\n", "homeassistant.state_interval_s", 2, "between 1 and 3600"),
            ("homeassistant:\n  expire_after_s: -1\n", "homeassistant.expire_after_s", 2, "between 0 and 86400"),
            ("homeassistant:\n  enabled: sometimes\n", "homeassistant.enabled", 2, "true or false"),
            ("metrics:\n  enabled: yes please\n", "metrics.enabled", 2, "true or false"),
            ("metrics:\n  listen: 9464\n", "metrics.listen", 2, "host:port"),
            ("metrics:\n  listen: \"127.0.0.1:0\"\n", "metrics.listen", 2, "between 1 and 65535"),
            ("metrics:\n  listen: \"127.0.0.1:70000\"\n", "metrics.listen", 2, "between 1 and 65535"),
            ("metrics:\n  listen: \"::1:9464\"\n", "metrics.listen", 2, "in brackets"),
            ("metrics:\n  listen: \":9464\"\n", "metrics.listen", 2, "host:port"),
            ("bluez:\n  adapter: AA:BB:CC:DD:EE\n", "bluez.adapter", 2, "AA:BB:CC:DD:EE:FF"),
            ("hrv:\n  window_s: 29\n", "hrv.window_s", 2, "between 30 and 300, got 29"),
            ("hrv:\n  window_s: 301\n", "hrv.window_s", 2, "between 30 and 300, got 301"),
            ("hrv:\n  interval_s: 0\n", "hrv.interval_s", 2, "between 1 and 3600, got 0"),
            ("hrv:\n  enabled: often\n", "hrv.enabled", 2, "true or false"),
            ("roaming:\n  hysteresis_db: -1\n", "roaming.hysteresis_db", 2, "between 0 and 40"),
            ("roaming:\n  report_interval_s: 0.04\n", "roaming.report_interval_s", 2, "between 0.05 and 60"),
            ("roaming:\n  smoothing: 0\n", "roaming.smoothing", 2, "above 0 and at most 1"),
            ("roaming:\n  report_interval_s: 5\n  lost_after_s: 8\n", "roaming.lost_after_s", 3, "at least twice report_interval_s"),
            ("gateway:\n  room: \"living room\"\n", "gateway.room", 2, "may only contain"),
        ] as [(String, String, Int, String)]
    )
    func outOfRange(yaml: String, keyPath: String, line: Int, message: String) {
        let error = configurationError(yaml)
        #expect(error?.keyPath == keyPath)
        #expect(error?.line == line)
        #expect(error?.message.contains(message) == true, "\(String(describing: error))")
    }

    @Test("a bad base_topic is rejected", arguments: ["a/+/b", "a//b", "/a", "a/", "a b", "a/#", "ä"])
    func badBaseTopic(topic: String) {
        let error = configurationError("mqtt:\n  base_topic: \"\(topic)\"\n")
        #expect(error?.keyPath == "mqtt.base_topic")
        #expect(error?.line == 2)
    }

    @Test("homeassistant: discovery is on by default with Home Assistant's own prefix and status topic")
    func homeAssistantDefaults() throws {
        let defaults = try Configuration.parse(yaml: "")
        #expect(defaults.homeassistant == Configuration.HomeAssistantSection())
        #expect(defaults.homeassistant.enabled && defaults.homeassistant.discoveryPrefix == "homeassistant")
        #expect(defaults.homeassistant.statusTopic == "homeassistant/status")
        #expect(defaults.homeassistant.stateIntervalSeconds == 5 && defaults.homeassistant.expireAfterSeconds == 0)
        let custom = try Configuration.parse(yaml: """
        homeassistant: {enabled: false, discovery_prefix: ha/discovery, status_topic: ha/status, state_interval_s: 30, expire_after_s: 600}
        """)
        #expect(!custom.homeassistant.enabled && custom.homeassistant.discoveryPrefix == "ha/discovery")
        #expect(custom.homeassistant.statusTopic == "ha/status")
        #expect(custom.homeassistant.stateIntervalSeconds == 30 && custom.homeassistant.expireAfterSeconds == 600)
        #expect(custom.resolvedSummary().contains("discovery_prefix: ha/discovery"))
    }

    @Test("metrics: off by default on loopback port 9464; IPv6 hosts in brackets; WEAR2MQTT_METRICS_ENABLED turns them on")
    func metricsDefaults() throws {
        let defaults = try Configuration.parse(yaml: "")
        #expect(!defaults.metrics.enabled && defaults.metrics.listen == "127.0.0.1:9464")
        #expect(defaults.metrics.endpoint == Configuration.ListenAddress(host: "127.0.0.1", port: 9464))
        let v6 = try Configuration.parse(yaml: "metrics: {enabled: true, listen: \"[::1]:9100\"}")
        #expect(v6.metrics.enabled && v6.metrics.endpoint == Configuration.ListenAddress(host: "::1", port: 9100))
        #expect(try Configuration.parse(yaml: "metrics: {listen: \"0.0.0.0:9464\"}").metrics.endpoint.host == "0.0.0.0")
        let environment = try Configuration.parse(yaml: "", environment: ["WEAR2MQTT_METRICS_ENABLED": "true",
                                                                           "WEAR2MQTT_METRICS_LISTEN": "localhost:9999"])
        #expect(environment.metrics.enabled && environment.metrics.endpoint == Configuration.ListenAddress(host: "localhost", port: 9999))
        #expect(defaults.resolvedSummary().contains("listen: 127.0.0.1:9464"))
    }

    @Test("hrv: on by default over a 60 s window published every 10 s; the window takes 30-300 s; WEAR2MQTT_HRV_WINDOW_S sets it")
    func heartRateVariabilityDefaults() throws {
        let defaults = try Configuration.parse(yaml: "")
        #expect(defaults.hrv.enabled && defaults.hrv.windowSeconds == 60 && defaults.hrv.intervalSeconds == 10)
        let custom = try Configuration.parse(yaml: "hrv: {enabled: false, window_s: 300, interval_s: 300}")
        #expect(!custom.hrv.enabled && custom.hrv.windowSeconds == 300 && custom.hrv.intervalSeconds == 300)
        #expect(try Configuration.parse(yaml: "hrv: {window_s: 30}").hrv.windowSeconds == 30)
        let environment = try Configuration.parse(yaml: "", environment: ["WEAR2MQTT_HRV_WINDOW_S": "120"])
        #expect(environment.hrv.windowSeconds == 120)
        #expect(defaults.resolvedSummary().contains("hrv:\n  enabled: true\n  window_s: 60\n  interval_s: 10"))
    }

    @Test("roaming: off by default with the documented defaults; a room is optional; the keys give the referee's settings")
    func roamingDefaults() throws {
        let defaults = try Configuration.parse(yaml: "")
        #expect(!defaults.roaming.enabled && defaults.gateway.room == nil)
        #expect(defaults.roaming.settings == RoamingSettings())
        let custom = try Configuration.parse(yaml: "gateway: {id: hall, room: hall}\nroaming: {enabled: true, report_interval_s: 0.5, "
                                             + "hysteresis_db: 8, hysteresis_s: 6, lost_after_s: 4, smoothing: 1}")
        #expect(custom.roaming.enabled && custom.gateway.room == "hall")
        #expect(custom.roaming.settings == RoamingSettings(reportInterval: .milliseconds(500), hysteresisDecibels: 8,
                                                           hysteresisDuration: .seconds(6), lostAfter: .seconds(4), smoothing: 1))
    }

    @Test("a multi-level base_topic is fine")
    func multiLevelBaseTopic() throws {
        #expect(try Configuration.parse(yaml: "mqtt: {base_topic: site_1/floor-2/w2m}").mqtt.baseTopic == "site_1/floor-2/w2m")
    }

    // MARK: Devices

    @Test("a device name follows the id rules of MQTT: one topic level of at most 64 bytes, no reserved word in any case",
          arguments: [
        ("bridge", #""bridge" is reserved for the gateway's own topics (bridge, get, request, response, set, in any case)"#),
        ("Bridge", #""Bridge" is reserved for the gateway's own topics (bridge, get, request, response, set, in any case)"#),
        ("REQUEST", #""REQUEST" is reserved for the gateway's own topics (bridge, get, request, response, set, in any case)"#),
        ("left wrist", #"may only contain A-Z, a-z, 0-9, _ and -, got "left wrist""#),
        ("a/b", #"may only contain A-Z, a-z, 0-9, _ and -, got "a/b""#),
        ("a+", #"may only contain A-Z, a-z, 0-9, _ and -, got "a+""#),
        ("..", #"may only contain A-Z, a-z, 0-9, _ and -, got "..""#),
        (String(repeating: "w", count: 65), "must be at most 64 characters, got 65"),
    ])
    func badDeviceName(name: String, message: String) {
        let error = configurationError("devices:\n  - address: AA:BB:CC:DD:EE:FF\n    name: \"\(name)\"\n")
        #expect(error?.keyPath == "devices[0].name")
        #expect(error?.line == 3)
        #expect(error?.message == message)
    }

    @Test("a device's configure is kept as the request payload it stands for, nested values and all")
    func deviceConfigure() throws {
        let configuration = try Configuration.parse(yaml: """
            devices:
              - address: AA:BB:CC:DD:EE:FF
                configure:
                  sensors: { accelerometer: { period_ms: 20 }, rotation: { enabled: false } }
                  gestures: { double_tap: true }
                  note: "text"
                  ratio: 0.5
            """, source: "config.yaml", environment: [:])
        let configure = try #require(configuration.devices.first?.configure)
        #expect(configure["sensors"] == ["accelerometer": ["period_ms": 20], "rotation": ["enabled": false]])
        #expect(configure["gestures"] == ["double_tap": true])
        #expect(configure["note"] == "text")
        #expect(configure["ratio"] == 0.5)
        let scalar = configurationError("devices:\n  - address: AA:BB:CC:DD:EE:FF\n    configure: fast\n")
        #expect(scalar?.keyPath == "devices[0].configure")
        #expect(scalar?.line == 3)
        #expect(configurationError("", environment: ["WEAR2MQTT_DEVICES": "x"]) != nil)
    }

    @Test("a device without an address, or with a bad one, is an error")
    func badDeviceAddress() {
        let missing = configurationError("devices:\n  - name: left\n")
        #expect(missing?.keyPath == "devices[0]")
        #expect(missing?.line == 2)
        let malformed = configurationError("devices:\n  - address: AA-BB-CC-DD-EE-FF\n")
        #expect(malformed?.keyPath == "devices[0].address")
        #expect(malformed?.line == 2)
    }

    @Test("the same device twice, or two devices with one name, is an error")
    func duplicateDevices() {
        let address = configurationError("devices:\n  - address: aa:bb:cc:dd:ee:ff\n  - address: AA:BB:CC:DD:EE:FF\n")
        #expect(address?.keyPath == "devices[1].address")
        #expect(address?.line == 3)
        let name = configurationError(
            "devices:\n  - {address: AA:BB:CC:DD:EE:01, name: a}\n  - {address: AA:BB:CC:DD:EE:02, name: a}\n")
        #expect(name?.keyPath == "devices[1].name")
        #expect(name?.line == 3)
    }

    // MARK: TLS rules

    @Test("a TLS key while TLS is off is an error saying to enable it")
    func tlsKeyWithoutTLS() {
        let error = configurationError("mqtt:\n  tls:\n    ca_file: /ca.pem\n")
        #expect(error?.keyPath == "mqtt.tls.ca_file")
        #expect(error?.line == 3)
        #expect(error?.message.contains("enabled: true") == true)
    }

    @Test("a client certificate needs its key and a key needs its certificate")
    func certificateAndKey() {
        let certificate = configurationError("mqtt:\n  tls:\n    enabled: true\n    cert_file: /c.pem\n")
        #expect(certificate?.keyPath == "mqtt.tls.cert_file")
        #expect(certificate?.line == 4)
        let key = configurationError("mqtt:\n  tls:\n    enabled: true\n    key_file: /k.pem\n")
        #expect(key?.keyPath == "mqtt.tls.key_file")
        #expect(key?.line == 4)
    }

    // MARK: Syntax and files

    @Test("a YAML syntax error gives its line")
    func syntaxError() {
        let error = configurationError("gateway:\n  id: x\nmqtt:\n  host: \"unterminated\n  port: 1\n")
        #expect(error?.line != nil)
        #expect(error?.message.hasPrefix("invalid YAML") == true)
        let indentation = configurationError("gateway:\n  id: x\n bad: 1\n")
        #expect(indentation?.line == 3)
    }

    @Test("a key given twice is an error")
    func duplicateKey() {
        let error = configurationError("mqtt:\n  host: a\n  host: b\n")
        #expect(error?.message.contains("has the key host more than once") == true)
        #expect(error?.line == 2)
    }

    @Test("a missing file is an error naming the path")
    func missingFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("absent.yaml").path
            do {
                _ = try Configuration.load(path: path, environment: [:])
                Issue.record("loading a missing file succeeded")
            } catch let error as ConfigurationError {
                #expect(error.source == path)
                #expect(error.line == nil)
                #expect(error.description.hasPrefix("\(path): cannot read the configuration file"))
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
    }

    @Test("a file on disk loads")
    func loadsFromDisk() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("config.yaml").path
            try "mqtt:\n  port: 8884\n".write(toFile: path, atomically: true, encoding: .utf8)
            #expect(try Configuration.load(path: path, environment: [:]).mqtt.port == 8884)
        }
    }

    @Test("typo suggestions count a swap of neighbours as one edit")
    func editDistances() {
        #expect(editDistance("hots", "host") == 1)
        #expect(editDistance("prot", "port") == 1)
        #expect(editDistance("kitten", "sitting") == 3)
        #expect(editDistance("", "abc") == 3)
        #expect(ConfigurationDocument.unknownKeyMessage("colour", known: ["host", "port"]).hasPrefix("unknown key (known"))
    }

    @Test("the error description is one line in compiler style")
    func errorDescription() {
        let located = ConfigurationError(source: "config.yaml", line: 7, keyPath: "mqtt.hots", message: "unknown key")
        #expect(located.description == "config.yaml:7: mqtt.hots: unknown key")
        let fromEnvironment = ConfigurationError(source: "WEAR2MQTT_MQTT_PORT", keyPath: "mqtt.port", message: "bad")
        #expect(fromEnvironment.description == "WEAR2MQTT_MQTT_PORT: mqtt.port: bad")
    }

    // MARK: Summary

    @Test("the resolved summary lists every key, with derived values, and parses back")
    func resolvedSummary() throws {
        let configuration = try Configuration.parse(yaml: "gateway: {id: lab}\ndevices: [{address: AA:BB:CC:DD:EE:FF}]")
        let summary = configuration.resolvedSummary()
        #expect(summary.contains("client_id: wear2mqtt-lab"))
        #expect(summary.contains("password: null"))
        #expect(summary.contains("min_delay_s: 0.5"))
        #expect(summary.contains("max_mb: 64.0"))
        #expect(summary.contains("min_version: '1.2'") || summary.contains("min_version: \"1.2\""))
        for key in ["state_dir", "log_format", "keepalive_s", "session_expiry_s", "ca_dir", "max_delay_s", "memory_messages", "adapter", "factory_reset"] {
            #expect(summary.contains("\(key):"), "summary lacks \(key)")
        }
        let withoutPassword = summary.split(separator: "\n").filter { !$0.contains("password:") && !$0.contains(" auth_token:") }.joined(separator: "\n")
        var resolved = configuration
        resolved.mqtt.clientID = "wear2mqtt-lab"
        #expect(try Configuration.parse(yaml: withoutPassword) == resolved)
    }

    @Test("bridge info summary has no credentials")
    func bridgeInfo() throws {
        let configuration = try Configuration.parse(yaml: "mqtt: {username: alice}", environment: ["WEAR2MQTT_MQTT_PASSWORD": "hunter2"])
        let info = configuration.bridgeInfoSummary
        #expect(info["mqtt.base_topic"] == "wear2mqtt")
        #expect(!info.values.contains("hunter2"))
        #expect(!info.values.contains("alice"))
    }
}
