import ArgumentParser
import EventLoop
import FoundationEssentials
import Glibc
import Frontend
import Gateway
import Logging
import MetricsExporter
import MQTT
import ServiceLifecycle

/// Exit codes a service manager or a script can act on; each comes with a one-line explanation on stderr.
enum ExitStatus {
    static let configurationError: Int32 = 1
    static let brokerAuthenticationRefused: Int32 = 3
    static let brokerTLSFailure: Int32 = 4
}

@main
struct Wear2MQTT: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wear2mqtt",
        abstract: "Bridges Bluetooth LE wearables to MQTT.",
        version: Wear2MQTTVersion.current,
        subcommands: [Run.self, ConfigCommand.self, DriversCommand.self],
        defaultSubcommand: Run.self
    )
}

struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "Path of the YAML configuration file (default: $WEAR2MQTT_CONFIG, else /etc/wear2mqtt/config.yaml).")
    var config = ProcessInfo.processInfo.environment["WEAR2MQTT_CONFIG"] ?? "/etc/wear2mqtt/config.yaml"

    @Option(name: .long, help: "Overrides gateway.log_level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String?

    /// Loads the configuration or exits 1 with the error's one line.
    func loadConfiguration() throws -> Configuration {
        do {
            var configuration = try Configuration.load(path: config, environment: ProcessInfo.processInfo.environment)
            if let logLevel {
                guard let level = Logger.Level(rawValue: logLevel) else {
                    throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
                }
                configuration.gateway.logLevel = level
            }
            return configuration
        } catch let error as ConfigurationError {
            fail(ExitStatus.configurationError, "configuration error: \(error)")
        }
    }
}

/// Prints `wear2mqtt: <message>` to stderr and exits with `status`.
func fail(_ status: Int32, _ message: String) -> Never {
    say(message)
    exit(status)
}

/// Prints `wear2mqtt: <line>` to stderr.
func say(_ line: String) {
    let text = "wear2mqtt: \(line)\n"
    _ = text.withCString { write(STDERR_FILENO, $0, strlen($0)) }
}

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the gateway until SIGTERM or SIGINT.")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let configuration = try options.loadConfiguration()
        LoggingSetup.bootstrap(format: configuration.gateway.logFormat, level: configuration.gateway.logLevel)
        let logger = Logger(label: "wear2mqtt")
        // 0700 whatever the umask; a folder left open to others is tightened with a warning (docs/deploy.md).
        do {
            if let loose = try OwnerOnlyDirectory.prepare(configuration.gateway.stateDirectory) {
                logger.warning("gateway.state_dir was open to other users; its mode is now 0700",
                               metadata: ["directory": "\(configuration.gateway.stateDirectory)",
                                          "was": "0\(String(loose, radix: 8))"])
            }
        } catch {
            fail(ExitStatus.configurationError,
                 "configuration error: gateway.state_dir: cannot create \(configuration.gateway.stateDirectory): \(error)")
        }
        // The data path's one loop: notification sockets and the broker's socket, so a sample is read, decoded and
        // published on one thread (docs/architecture.md).
        let dataPath: EventLoop
        do {
            dataPath = try EventLoop(name: "data-path")
            dataPath.coalescingWindow = .milliseconds(configuration.mqtt.coalesceMilliseconds)
            dataPath.start()
        } catch {
            fail(1, "cannot start the event loop: \(error)")
        }
        let client: MQTTClient
        do {
            var mqtt = configuration.mqttClientConfiguration()
            // Credentials the broker accepted before are retried when refused: only a first refusal ends in exit 3.
            mqtt.credentialsAcceptedBefore = AcceptedCredentials(configuration).wereAcceptedBefore
            client = try MQTTClient(configuration: mqtt, logger: Logger(label: "mqtt"),
                                    loop: dataPath)
        } catch {
            fail(ExitStatus.configurationError, "configuration error: mqtt: \(error)")
        }
        logger.info("starting", metadata: ["version": "\(Wear2MQTTVersion.current)", "gateway_id": "\(configuration.gateway.id)"])
        let feed = configuration.frontend.enabled ? BrowserFeed(
            greeting: .init(baseTopic: configuration.mqtt.baseTopic, gatewayID: configuration.gateway.id, version: Wear2MQTTVersion.current),
            token: configuration.frontend.authToken, trustedProxies: configuration.frontend.trustedProxies, brokerConnected: { [client] in client.statistics.connected }) : nil
        let gateway = GatewayService(configuration: configuration, client: client, logger: logger, dataPath: dataPath, frontend: feed)
        // systemd Type=notify (docs/architecture.md): readiness, status, watchdog pings from the data-path loop.
        let supervisor = SystemdSupervisor(environment: ProcessInfo.processInfo.environment, loop: dataPath,
                                           logger: Logger(label: "systemd")) { await gateway.status() }
        // Last, so graceful shutdown (in reverse order) reaches it first and STOPPING=1 goes out at once.
        let systemd: [ServiceGroupConfiguration.ServiceConfiguration] = supervisor.map { [.init(service: $0)] } ?? []
        #if DEBUG
        DebugDataPathStall.install(on: dataPath, environment: ProcessInfo.processInfo.environment)
        #endif
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: gateway)] + metricsServer(configuration.metrics, gateway)
                + frontendServer(configuration.frontend, feed, dataPath: dataPath) + systemd,
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        do {
            try await group.run()
        } catch let error as MQTTError {
            switch error {
            case .authenticationRefused:
                fail(ExitStatus.brokerAuthenticationRefused,
                     "\(error). Check mqtt.username and the password (mqtt.password_file or WEAR2MQTT_MQTT_PASSWORD).")
            case .tlsFailure:
                fail(ExitStatus.brokerTLSFailure,
                     "\(error). Check mqtt.tls.ca_file / ca_dir, the client certificate and mqtt.host against the broker's certificate.")
            default:
                fail(1, "\(error)")
            }
        }
        logger.info("stopped")
    }
}

/// `GET /metrics`, only with `metrics.enabled` (off, no HTTP server and no thread for it).
func metricsServer(_ metrics: Configuration.MetricsSection,
                   _ gateway: GatewayService) -> [ServiceGroupConfiguration.ServiceConfiguration] {
    guard metrics.enabled else { return [] }
    return [.init(service: MetricsServer(host: metrics.endpoint.host, port: metrics.endpoint.port, logger: Logger(label: "metrics"),
                                         body: { await gateway.metricsExposition() }))]
}

/// The web interface, only with `frontend.enabled` (off: no HTTP server, no thread, no feed on the data path).
func frontendServer(_ section: Configuration.FrontendSection, _ feed: BrowserFeed?,
                    dataPath: EventLoop) -> [ServiceGroupConfiguration.ServiceConfiguration] {
    guard let feed else { return [] }
    // `<base>/health` answers from a beat of the data-path loop, as the systemd watchdog's pings come from it.
    let heartbeat = DataPathHeartbeat()
    heartbeat.start(on: dataPath)
    var tls: TLSServerContext?
    if let certificate = section.tls.certificateFile, let key = section.tls.keyFile {
        do {
            tls = try TLSServerContext(certificateFile: certificate, keyFile: key)
        } catch {
            fail(ExitStatus.configurationError, "configuration error: \(error)")
        }
    }
    return [.init(service: FrontendServer(section: section, feed: feed, tls: tls, heartbeat: heartbeat, logger: Logger(label: "frontend")))]
}

struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config", abstract: "Configuration tools.", subcommands: [Check.self])

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Load and validate the configuration; print it resolved, secrets masked. Exit 0 if valid, 1 if not.")

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let configuration = try options.loadConfiguration()
            // The web interface's certificate and key as the start loads them (readable, PEM, a matching pair).
            if let certificate = configuration.frontend.tls.certificateFile, let key = configuration.frontend.tls.keyFile {
                do {
                    _ = try TLSServerContext(certificateFile: certificate, keyFile: key)
                } catch {
                    fail(1, "configuration error: \(error)")
                }
            }
            print(configuration.resolvedSummary(maskSecrets: true), terminator: "")
            say("configuration \(options.config) is valid")
        }
    }
}

/// `wear2mqtt drivers`: every driver's description, as JSON or as docs/devices.md.
struct DriversCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drivers", abstract: "Print what each driver supports (its description), as JSON or Markdown.")

    @Flag(help: "Markdown, as docs/devices.md, instead of JSON.")
    var markdown = false

    func run() {
        if markdown {
            print(DriverCatalog.markdown(), terminator: "")
        } else {
            print(String(decoding: DriverCatalog.json(), as: UTF8.self))
        }
    }
}
