import Foundation
import Glibc
import Testing
import Wear2MQTTTesting

/// The built gateway over two simulated ESPHome proxies (two rooms) beside its local adapter: devices spread over the
/// radios by what each hears and its free slots, a proxy killed mid-stream and what becomes of its devices, a wearable
/// walking from one room to the other (docs/radios.md). Every device is served or reported at every step.
@Suite struct ESPHomeTwoProxiesEndToEndTests {
    static let strap1 = "C0:FF:EE:00:00:81"
    static let strap2 = "C0:FF:EE:00:00:82"
    static let thermometer = "C0:FF:EE:00:00:83"

    /// A `wear2mqtt-sim proxy` process: one room, with its devices at the levels it hears them.
    struct Room {
        let name: String
        let port: Int
        let scenario: String
        let slots: Int
        var process: ChildProcess

        static func start(_ name: String, devices: [(address: String, rssi: Int)], slots: Int, in directory: TemporaryDirectory,
                          port: Int? = nil) async throws -> Room {
            let scenario = try directory.write("\(name).yaml", "seed: 5\ndevices:\n" + devices.map {
                "  - kind: heart_rate_strap\n    address: \($0.address)\n    advertising_interval: 100ms\n    rssi: \($0.rssi)\n    options: { rate_hz: 5 }"
            }.joined(separator: "\n") + "\n")
            let port = try port ?? FreePort.loopback()
            let process = try launch(name, port: port, scenario: scenario, slots: slots, directory: directory, run: 1)
            return Room(name: name, port: port, scenario: scenario, slots: slots, process: process)
        }

        static func launch(_ name: String, port: Int, scenario: String, slots: Int, directory: TemporaryDirectory, run: Int) throws -> ChildProcess {
            let executable = URL(fileURLWithPath: GatewayProcess.executablePath).deletingLastPathComponent().appendingPathComponent("wear2mqtt-sim").path
            return try ChildProcess(executable: executable,
                                    arguments: ["proxy", "--port", "\(port)", "--name", name, "--slots", "\(slots)", "--scenario", scenario],
                                    outputPath: directory.file("\(name)-\(run).out"), errorPath: directory.file("\(name)-\(run).err"))
        }

        func serving() async throws -> Bool {
            try await process.waitForErrorOutput(timeout: .seconds(60)) { $0.contains("serving ESPHome's API") }
        }

        var configuration: String { "  - name: \(name)\n    host: 127.0.0.1\n    port: \(port)\n" }
    }

    static func radios(_ stack: Stack) -> [String: String] {
        let entries = stack.payloads("bridge/devices").last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) } as? [[String: Any]]
        return Dictionary((entries ?? []).compactMap { entry in (entry["radio"] as? String).map { (entry["id"] as? String ?? "", $0) } }) { $1 }
    }

    static func radioState(_ stack: Stack, _ id: String) -> String? {
        (stack.last("bridge/info")?["adapters"] as? [[String: Any]])?.first { $0["id"] as? String == id }?["state"] as? String
    }

    static func samples(_ stack: Stack, _ id: String) -> Int { stack.payloads("\(id)/sensor/heart_rate").count }

    /// The kitchen and the hall started and serving, killed by pid however `body` ends (the kitchen as it is then: a
    /// test may restart it).
    static func withRooms(_ prefix: String, kitchen: [(address: String, rssi: Int)], hall: [(address: String, rssi: Int)], slots: Int,
                          _ body: (_ kitchen: inout Room, _ hall: Room, _ directory: TemporaryDirectory) async throws -> Void) async throws {
        let directory = try TemporaryDirectory(prefix: prefix)
        defer { directory.remove() }
        var kitchenRoom = try await Room.start("kitchen", devices: kitchen, slots: slots, in: directory)
        let hallRoom = try await Room.start("hall", devices: hall, slots: slots, in: directory)
        defer {
            kitchenRoom.process.signal(SIGKILL)
            hallRoom.process.signal(SIGKILL)
        }
        #expect(try await kitchenRoom.serving())
        #expect(try await hallRoom.serving())
        try await body(&kitchenRoom, hallRoom, directory)
    }

    @Test func slotsSpreadTheStrapsAndAProxyKilledMidStreamLeavesItsStrapReportedUntilItIsBack() async throws {
        // Both rooms hear both straps, the kitchen louder; each proxy holds one connection.
        try await Self.withRooms("esphome-two", kitchen: [(Self.strap1, -50), (Self.strap2, -55)], hall: [(Self.strap1, -75), (Self.strap2, -80)], slots: 1) { kitchen, hall, directory in
            try await Stack.with(scenarioDevices: "  - kind: thermometer\n    address: \(Self.thermometer)\n    advertising_interval: 100ms",
                                 configuredDevices: "  - address: \(Self.strap1)\n    name: strap1\n  - address: \(Self.strap2)\n    name: strap2\n"
                                    + "  - address: \(Self.thermometer)\n    name: thermo\n",
                                 gatewayExtra: "radios:\n" + kitchen.configuration + hall.configuration) { stack in
                // One strap in each room (the kitchen has one slot), the thermometer on the local adapter.
                #expect(await stack.until(timeout: .seconds(90)) {
                    let radios = Self.radios(stack)
                    return Set([radios["strap1"], radios["strap2"]]) == ["kitchen", "hall"] && radios["thermo"] == "hci0"
                        && Self.samples(stack, "strap1") >= 3 && Self.samples(stack, "strap2") >= 3
                }, "radios: \(Self.radios(stack)); gateway: \(stack.gateway.child.errorOutput.suffix(2000))")
                let inKitchen = Self.radios(stack)["strap1"] == "kitchen" ? "strap1" : "strap2"
                let inHall = inKitchen == "strap1" ? "strap2" : "strap1"

                // The kitchen's plug pulled: its strap goes offline and the kitchen is reported gone; the hall's strap
                // keeps streaming; the kitchen's strap cannot move (the hall's only slot is taken) and stays reported offline.
                try await kitchen.killAndRestartLater(in: directory)
                #expect(await stack.until(timeout: .seconds(30)) {
                    stack.payloads("\(inKitchen)/availability").last == #"{"state":"offline"}"# && Self.radioState(stack, "kitchen") == "absent"
                }, "\(String(describing: stack.last("bridge/info")))")
                let hallSamples = Self.samples(stack, inHall)
                #expect(await stack.until(timeout: .seconds(20)) { Self.samples(stack, inHall) >= hallSamples + 5 })
                #expect(stack.payloads("\(inKitchen)/availability").last == #"{"state":"offline"}"#)

                // The kitchen back: its strap reconnects through it by itself.
                try await kitchen.restart(in: directory)
                #expect(try await kitchen.serving())
                let before = Self.samples(stack, inKitchen)
                #expect(await stack.until(timeout: .seconds(90)) {
                    Self.radios(stack)[inKitchen] == "kitchen" && Self.samples(stack, inKitchen) >= before + 3 && Self.radioState(stack, "kitchen") == "ok"
                }, "radios: \(Self.radios(stack)); gateway: \(stack.gateway.child.errorOutput.suffix(2000))")
            }
        }
    }

    @Test func aStrapWalksFromTheKitchenToTheHallAndTheQuietKitchenIsReportedUntilSomeoneIsBack() async throws {
        try await Self.withRooms("esphome-walk", kitchen: [(Self.strap1, -50)], hall: [(Self.strap1, -75)], slots: 3) { kitchen, hall, directory in
            try await Stack.with(scenarioDevices: "  - kind: thermometer\n    address: \(Self.thermometer)\n    advertising_interval: 100ms",
                                 configuredDevices: "  - address: \(Self.strap1)\n    name: strap1\n",
                                 gatewayExtra: "radios:\n" + kitchen.configuration + hall.configuration
                                    + "watchdog:\n  silence_s: 5\n  grace_s: 2\n  interval_s: 1") { stack in
                // The kitchen hears it louder.
                #expect(await stack.until(timeout: .seconds(60)) { Self.radios(stack)["strap1"] == "kitchen" && Self.samples(stack, "strap1") >= 3 },
                        "radios: \(Self.radios(stack)); gateway: \(stack.gateway.child.errorOutput.suffix(2000))")
                // It walks out of the kitchen (SIGUSR1: its link there times out, the kitchen hears nobody): it carries on
                // through the hall, without waiting for the kitchen's last sighting to go stale.
                kitchen.process.signal(SIGUSR1)
                let walked = ContinuousClock.now
                let before = Self.samples(stack, "strap1")
                #expect(await stack.until(timeout: .seconds(30)) { Self.radios(stack)["strap1"] == "hall" && Self.samples(stack, "strap1") >= before + 3 },
                        "radios: \(Self.radios(stack)); gateway: \(stack.gateway.child.errorOutput.suffix(2000))")
                let moved = ContinuousClock.now - walked
                // The kitchen, which heard someone and now hears nobody, is taken through the watchdog's steps
                // (advertisements asked for again, then reconnected: it holds no link) and reported failed.
                func kitchenEvents() -> [String] {
                    stack.payloads("bridge/event").compactMap(stack.json).filter { $0["type"] as? String == "radio_changed" }
                        .compactMap { $0["data"] as? [String: Any] }.filter { $0["id"] as? String == "kitchen" }
                        .map { "\($0["state"] ?? "-")/\($0["step"] ?? "-")" }
                }
                #expect(await stack.until(timeout: .seconds(45)) { kitchenEvents().contains("failed/-") },
                        "kitchen: \(kitchenEvents()); info: \(String(describing: stack.last("bridge/info")))")
                #expect(kitchenEvents().contains("recovering/restart_discovery") && kitchenEvents().contains("recovering/reset"), "\(kitchenEvents())")
                #expect(Self.radios(stack)["strap1"] == "hall")
                // Someone walks back in: the kitchen hears again and is reported working.
                kitchen.process.signal(SIGUSR2)
                #expect(await stack.until(timeout: .seconds(30)) { Self.radioState(stack, "kitchen") == "ok" }, "kitchen: \(kitchenEvents())")
                print("figure: strap1 streaming through the hall \(moved) after it walked out of the kitchen")
            }
        }
    }
}

extension ESPHomeTwoProxiesEndToEndTests.Room {
    /// Killed as a pulled plug would be: no goodbye, the socket just closes.
    func killAndRestartLater(in directory: TemporaryDirectory) async throws {
        process.signal(SIGKILL)
        _ = await process.waitForExit()
    }

    /// Started again on the same port, as an ESP32 that got its power back.
    mutating func restart(in directory: TemporaryDirectory) async throws {
        process = try Self.launch(name, port: port, scenario: scenario, slots: slots, directory: directory, run: 2)
    }
}
