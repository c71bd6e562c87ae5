import ArgumentParser
import DBus
import ESPHome
import Foundation
import Logging
import Simulator
import Wearables
import Firmware
import SimulatedWearables

/// `wear2mqtt-sim`: a BlueZ-compatible simulator with simulated wearables (see docs/simulator.md).
@main
struct SimulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wear2mqtt-sim",
        abstract: "Simulates bluetoothd 5.66 (org.bluez on D-Bus) with simulated BLE wearables.",
        subcommands: [Run.self, Control.self, Peripheral.self, FirmwarePackage.self, Proxy.self])
}

/// `session`, `system`, or a D-Bus address such as `unix:path=/tmp/bus`.
struct BusOption: ExpressibleByArgument {
    let address: BusAddress

    init?(argument: String) {
        switch argument {
        case "session": address = .session
        case "system": address = .system
        default:
            guard argument.contains(":") else { return nil }
            address = .address(argument)
        }
    }
}

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Owns org.bluez on the bus and simulates the scenario until SIGTERM or SIGINT.")

    @Option(help: "session, system, or a D-Bus address (unix:path=…).")
    var bus: BusOption = BusOption(argument: "system")!

    @Option(help: "The scenario YAML file.")
    var scenario: String

    @Option(help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: String = "info"

    func run() async throws {
        bootstrapLogging(logLevel)
        let logger = Logger(label: "wear2mqtt-sim")
        let loaded: Scenario
        do {
            loaded = try ScenarioLoader.load(contentsOf: scenario)
        } catch {
            FileHandle.standardError.write(Data("wear2mqtt-sim: \(error)\n".utf8))
            throw ExitCode(1)
        }
        let simulator: BlueZSimulator
        do {
            simulator = try await BlueZSimulator.start(loaded, on: bus.address, logger: logger)
        } catch {
            FileHandle.standardError.write(Data("wear2mqtt-sim: \(error)\n".utf8))
            throw ExitCode(2)
        }
        let reason = await ShutdownSignal.wait(orUntil: simulator.disconnection)
        logger.info("stopping (\(reason))")
        await simulator.stop()
    }
}

/// `wear2mqtt-sim proxy`: an ESPHome Bluetooth proxy's native API on a TCP port, serving the scenario's devices
/// (advertisements, connections, GATT) from this process, with no bus.
struct Proxy: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serves ESPHome's native API as a Bluetooth proxy would, until SIGTERM or SIGINT.",
        discussion: """
        SIGUSR1: every device walks out of range (links drop with a connection timeout, 0x08; no advertisements; \
        connects fail after the adapter's connect_timeout with 0x3E). SIGUSR2: they walk back in (advertising \
        resumes; the client connects again).
        """)

    @Option(help: "The TCP port to listen on, on 127.0.0.1 (ESPHome's is 6053).")
    var port: Int = 6053

    @Option(help: "The proxy's node name.")
    var name: String = "wear2mqtt-sim-proxy"

    @Option(help: "api.encryption.key: 32 bytes in base64; without it the API is plaintext.")
    var key: String?

    @Option(help: "Active connections the proxy holds at most.")
    var slots: Int = 3

    @Option(help: "The scenario YAML file (as for run): the devices in the proxy's range.")
    var scenario: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: String = "info"

    func run() async throws {
        bootstrapLogging(logLevel)
        let logger = Logger(label: "wear2mqtt-sim")
        var settings = SimulatedProxyServer.Settings(port: port)
        settings.name = name
        settings.slots = slots
        if let scenario {
            do {
                settings.scenario = try ScenarioLoader.load(contentsOf: scenario)
            } catch {
                FileHandle.standardError.write(Data("wear2mqtt-sim: \(error)\n".utf8))
                throw ExitCode(1)
            }
        }
        if let key {
            guard let bytes = EncryptionKey.parse(base64: key) else {
                FileHandle.standardError.write(Data("wear2mqtt-sim: --key is not 32 bytes in base64\n".utf8))
                throw ExitCode(1)
            }
            settings.key = bytes
        }
        let server: SimulatedProxyServer
        do {
            server = try SimulatedProxyServer(settings)
        } catch {
            FileHandle.standardError.write(Data("wear2mqtt-sim: \(error)\n".utf8))
            throw ExitCode(2)
        }
        // Before the serving line, which tests wait for: SIGUSR1's default action would end the process.
        let walks = RangeWalkSignals.observe { inRange in
            if inRange {
                server.walkBackIntoRange()
                logger.info("devices back in range")
            } else {
                server.walkOutOfRange()
                logger.info("devices walked out of range")
            }
        }
        server.start()
        FileHandle.standardError.write(Data("wear2mqtt-sim: serving ESPHome's API as \(name) on 127.0.0.1:\(port)\(key == nil ? "" : " (encrypted)") with \(settings.scenario?.devices.count ?? 0) device(s)\n".utf8))
        _ = await ShutdownSignal.wait()
        for source in walks { source.cancel() }
        server.stop()
    }
}

/// SIGUSR1 and SIGUSR2 as the proxy's devices walking out of its range and back in (false, then true), handled as
/// `ShutdownSignal` handles SIGTERM: the signals ignored and watched by dispatch sources, so nothing runs in a signal
/// handler; one serial queue for both, so signals sent one after the other are carried out in that order. The sources
/// are the caller's to cancel.
enum RangeWalkSignals {
    static func observe(_ walked: @escaping @Sendable (_ inRange: Bool) -> Void) -> [DispatchSourceSignal] {
        let queue = DispatchQueue(label: "wear2mqtt-sim.range-walk")
        return [(SIGUSR1, false), (SIGUSR2, true)].map { number, inRange in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { walked(inRange) }
            source.resume()
            return source
        }
    }
}

/// Waits for SIGTERM or SIGINT, or for the bus to go away.
enum ShutdownSignal {
    static func wait(orUntil disconnection: AsyncStream<Void>? = nil) async -> String {
        let (events, continuation) = AsyncStream.makeStream(of: String.self)
        var sources: [DispatchSourceSignal] = []
        for (number, name) in [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(name) }
            source.resume()
            sources.append(source)
        }
        let watcher = Task {
            guard let disconnection else { return }
            for await _ in disconnection {}
            continuation.yield("the bus connection closed")
        }
        var iterator = events.makeAsyncIterator()
        let reason = await iterator.next() ?? "stopped"
        watcher.cancel()
        for source in sources { source.cancel() }
        return reason
    }
}

struct Control: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Injects a fault or device event into a running simulator, or reads back what a device received or shows.",
        discussion: """
        Verbs: list; drop-link ADDRESS; refuse-connects ADDRESS COUNT [ERROR]; advertising ADDRESS on|off;
        latency ADDRESS|adapter MILLISECONDS; fail-next-call ADDRESS|adapter METHOD [ERROR]; power on|off;
        press-button ADDRESS; event ADDRESS button_press|find_my_phone|spot_check; rssi ADDRESS DBM;
        rssi-noise ADDRESS DB SEED; deafen-scanner restart|power; stick-discovery; remove-adapter; restore-adapter;
        received ADDRESS CHARACTERISTIC-UUID; inspect ADDRESS|adapter.
        """)

    @Option(help: "session, system, or a D-Bus address (unix:path=…).")
    var bus: BusOption = BusOption(argument: "system")!

    @Argument(help: "The verb and its arguments.")
    var words: [String]

    func run() async throws {
        let connection: BusConnection
        do {
            connection = try BusConnection(bus.address)
        } catch {
            throw ValidationError("cannot connect to the bus: \(error)")
        }
        defer { connection.close() }
        let client = SimulatorControlClient(bus: connection)
        guard let verb = words.first else { throw ValidationError("name a verb (see --help)") }
        let arguments = Array(words.dropFirst())
        func argument(_ index: Int, _ what: String) throws -> String {
            guard index < arguments.count else { throw ValidationError("\(verb) needs \(what)") }
            return arguments[index]
        }
        func number(_ index: Int, _ what: String) throws -> Int {
            guard let value = Int(try argument(index, what)) else { throw ValidationError("\(what) must be a number") }
            return value
        }
        func onOff(_ index: Int) throws -> Bool {
            switch try argument(index, "on or off") {
            case "on": return true
            case "off": return false
            default: throw ValidationError("say on or off")
            }
        }
        func target(_ index: Int) throws -> String {
            let text = try argument(index, "an address or adapter")
            return text == "adapter" ? "" : text
        }
        do {
            switch verb {
            case "list":
                for device in try await client.listDevices() { print("\(device.address)  \(device.kind)  \(device.state)") }
            case "drop-link": try await client.dropLink(try argument(0, "an address"))
            case "refuse-connects":
                try await client.refuseConnects(try argument(0, "an address"), count: try number(1, "a count"),
                                                error: arguments.count > 2 ? arguments[2] : "")
            case "advertising": try await client.setAdvertising(try argument(0, "an address"), try onOff(1))
            case "latency": try await client.setLatency(try target(0), milliseconds: try number(1, "milliseconds"))
            case "fail-next-call":
                try await client.failNextCall(try target(0), method: try argument(1, "a method"),
                                              error: arguments.count > 2 ? arguments[2] : "")
            case "power": try await client.setPowered(try onOff(0))
            case "press-button": try await client.raiseEvent(try argument(0, "an address"), .buttonPress)
            case "event":
                guard let event = DeviceEvent(rawValue: try argument(1, "an event")) else {
                    throw ValidationError("events: \(DeviceEvent.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                try await client.raiseEvent(try argument(0, "an address"), event)
            case "rssi": try await client.setRSSI(try argument(0, "an address"), try number(1, "an RSSI in dBm"))
            case "rssi-noise":
                guard let seed = UInt64(try argument(2, "a seed")) else { throw ValidationError("the seed must be a number") }
                try await client.setRSSINoise(try argument(0, "an address"), amplitude: try number(1, "an amplitude in dB"), seed: seed)
            case "deafen-scanner":
                let text = try argument(0, "restart or power (what clears it)")
                guard let cure = DeafScannerCure(rawValue: text) else { throw ValidationError("say restart or power") }
                try await client.deafenScanner(clearedBy: cure)
            case "stick-discovery": try await client.stickDiscovery()
            case "remove-adapter": try await client.removeAdapter()
            case "restore-adapter": try await client.restoreAdapter()
            case "received":
                let values = try await client.received(try argument(0, "an address"), characteristic: try argument(1, "a UUID"))
                for value in values { print(value.map { String(format: "%02x", $0) }.joined()) }
            case "inspect":
                let values = try await client.inspect(try target(0))
                for key in values.keys.sorted() { print("\(key)=\(values[key] ?? "")") }
            default:
                throw ValidationError("unknown verb \(verb) (see --help)")
            }
        } catch let error as BusError {
            FileHandle.standardError.write(Data("wear2mqtt-sim control: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}


struct Peripheral: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serves one simulated device through a real bluetoothd (GattManager1 + LEAdvertisingManager1) on an adapter.",
        discussion: "Runs until SIGTERM or SIGINT. Exit codes: 1 unknown device or option, 2 bluetoothd refused or is absent.")

    @Option(help: "session, system, or a D-Bus address (unix:path=…).")
    var bus: BusOption = BusOption(argument: "system")!

    @Option(help: "The adapter that plays the peripheral, e.g. hci1.")
    var adapter: String = "hci1"

    @Option(help: "The device kind: \(SimulatedDeviceCatalog.kinds.map(\.name).joined(separator: ", ")).")
    var device: String

    @Option(help: "Advertised name and GAP Device Name (default: the kind's).")
    var name: String?

    @Option(help: "Seed of the simulated values.")
    var seed: UInt64 = 1

    @Option(help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: String = "info"

    func run() async throws {
        bootstrapLogging(logLevel)
        let logger = Logger(label: "wear2mqtt-sim")
        guard let kind = SimulatedDeviceCatalog.kind(named: device) else {
            FileHandle.standardError.write(Data("wear2mqtt-sim: unknown device kind \(device)\n".utf8))
            throw ExitCode(1)
        }
        let peripheral: any SimulatedPeripheral
        do {
            peripheral = try kind.make(SimulatedDeviceConfiguration(name: name, seed: seed))
        } catch {
            FileHandle.standardError.write(Data("wear2mqtt-sim: \(error)\n".utf8))
            throw ExitCode(1)
        }
        let server: GattPeripheralServer
        do {
            server = try await GattPeripheralServer.start(peripheral, adapter: adapter, on: bus.address, name: name, logger: logger)
        } catch {
            FileHandle.standardError.write(Data("wear2mqtt-sim: \(error)\n".utf8))
            throw ExitCode(2)
        }
        let reason = await ShutdownSignal.wait(orUntil: server.disconnection)
        logger.info("stopping (\(reason))")
        await server.stop()
    }
}

/// Writes a Nordic DFU package the simulated bootloaders accept, for the demo and for trying `request/dfu` against
/// the simulator. Its image is filler, not firmware: no real device should be given it (and none would accept its
/// unsigned init packet).
struct FirmwarePackage: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "firmware-package",
        abstract: "Writes a Nordic DFU package (nrfutil's zip) for the simulated bootloaders and prints its SHA-256.",
        discussion: "The image is filler bytes: for the simulator only. Exit code 1: bad version or size, or the file cannot be written.")

    @Option(help: "Where to write the zip.")
    var output: String

    @Option(help: "The version the band reports afterwards, major.minor.patch (packed as nrfutil packs it).")
    var version: String = "2.2.0"

    @Option(help: "The image size in bytes.")
    var size: Int = 65_536

    @Flag(help: "A Legacy DFU package (nrfutil 0.5) instead of Secure DFU.")
    var legacy = false

    func run() async throws {
        let parts = version.split(separator: ".", omittingEmptySubsequences: false).map { UInt32($0) }
        guard parts.count == 3, let major = parts[0], let minor = parts[1], let patch = parts[2],
              major < 42_949, minor < 100, patch < 100 else {
            throw ValidationError("--version must be major.minor.patch with minor and patch below 100, got \(version)")
        }
        guard (1...16 << 20).contains(size) else { throw ValidationError("--size must be 1 byte to 16 MiB, got \(size)") }
        let packed = major * 10_000 + minor * 100 + patch
        let image = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 7) }
        let package = legacy
            ? DFUPackageBuilder.legacyApplication(firmware: image, applicationVersion: packed)
            : DFUPackageBuilder.application(firmware: image, firmwareVersion: packed)
        do {
            try Data(package).write(to: URL(fileURLWithPath: output))
        } catch {
            FileHandle.standardError.write(Data("wear2mqtt-sim: cannot write \(output): \(error.localizedDescription)\n".utf8))
            throw ExitCode(1)
        }
        print(DFUPackageFile.sha256(of: package))
    }
}

/// Logs to stderr at `level` (trace … error); an unknown level means info.
func bootstrapLogging(_ level: String) {
    let threshold = Logger.Level(rawValue: level) ?? .info
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = threshold
        return handler
    }
}
