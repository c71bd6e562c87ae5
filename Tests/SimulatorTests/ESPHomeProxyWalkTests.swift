import ESPHome
import EventLoop
import Foundation
@testable import Simulator
import Synchronization
import Testing
import Wear2MQTTTesting

/// A wearer walking out of a simulated proxy's room and back in: the proxy's radio in process (its links end as a
/// supervision timeout ends them, 0x08, their slots freed; nothing is heard; a connect fails as for a device the proxy
/// does not hear; back in range the devices advertise and connect again), and `wear2mqtt-sim proxy` doing the same on
/// SIGUSR1 and SIGUSR2 for aioesphomeapi (esphome_interop.py --walk).
@Suite(.timeLimit(.minutes(2)))
struct ESPHomeProxyWalkTests {
    static let strap: UInt64 = 0xC0FFEE000001
    static let thermometer: UInt64 = 0xC0FFEE000002
    /// Both devices advertise every 100 ms and connect in 20 ms; a connect to a device not heard gives up after 500 ms.
    static let scenario = """
        seed: 42
        adapter:
          connect_timeout: 500ms
        devices:
          - kind: heart_rate_strap
            address: C0:FF:EE:00:00:01
            name: HRM-Proxy
            rssi: -58
            advertising_interval: 100ms
            connect_delay: 20ms
            options: { rate_hz: 10, battery: 77 }
          - kind: thermometer
            address: C0:FF:EE:00:00:02
            rssi: -70
            advertising_interval: 100ms
            connect_delay: 20ms
        """

    /// What the radio sent its subscriber, in order.
    final class Sent: Sendable {
        private let messages = Mutex<[APIMessage]>([])

        func append(_ message: APIMessage) { messages.withLock { $0.append(message) } }
        var count: Int { messages.withLock { $0.count } }

        private func sent(_ type: APIMessageType, from start: Int) -> [APIMessage] {
            messages.withLock { Array($0.dropFirst(start)) }.filter { $0.type == type.rawValue }
        }

        func connections(from start: Int = 0) -> [BluetoothDeviceConnectionResponse] {
            sent(.bluetoothDeviceConnectionResponse, from: start).compactMap { $0.decoded(as: BluetoothDeviceConnectionResponse.self) }
        }

        func slots(from start: Int = 0) -> [BluetoothConnectionsFreeResponse] {
            sent(.bluetoothConnectionsFreeResponse, from: start).compactMap { $0.decoded(as: BluetoothConnectionsFreeResponse.self) }
        }

        func advertised(from start: Int = 0) -> [UInt64] {
            sent(.bluetoothLERawAdvertisementsResponse, from: start)
                .compactMap { $0.decoded(as: BluetoothLERawAdvertisementsResponse.self) }.flatMap(\.advertisements).map(\.address)
        }
    }

    /// Runs `body` on the radio's loop and hands back what it returns.
    static func onLoop<T: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in loop.execute { continuation.resume(returning: body()) } }
    }

    static func connect(_ address: UInt64) -> APIMessage {
        var request = BluetoothDeviceRequest()
        request.address = address
        request.requestType = .connectV3WithCache
        request.hasAddressType_p = true
        request.addressType = 1
        return APIMessage(.bluetoothDeviceRequest, request)
    }

    @Test("out of range the links drop with 0x08 and free their slots, nothing is heard and a connect fails with 0x3E; back in range the devices advertise and connect")
    func radioWalksOutAndBackIn() async throws {
        let scenario = try ScenarioLoader.load(yaml: Self.scenario)
        let devices = try scenario.devices.enumerated().map { index, settings in
            try ProxiedDevice(settings: settings, index: index, scenarioSeed: scenario.seed)
        }
        let loop = try EventLoop.started(name: "proxy-walk-test")
        defer { loop.stop() }
        var settings = ProxyRadio.Settings()
        settings.connectTimeout = scenario.adapter.connectTimeout
        let radio = ProxyRadio(devices: devices, slots: 2, settings: settings, loop: loop)
        let sent = Sent()
        radio.attach { _, message in sent.append(message) }
        let client: Int32 = 7
        loop.execute { radio.handle(APIMessage(.subscribeBluetoothLEAdvertisementsRequest), from: client) }
        #expect(await eventually(timeout: .seconds(20)) { Set(sent.advertised()) == [Self.strap, Self.thermometer] })

        for address in [Self.strap, Self.thermometer] { loop.execute { radio.handle(Self.connect(address), from: client) } }
        #expect(await eventually(timeout: .seconds(20)) { sent.connections().filter(\.connected).count == 2 })

        let walkedOut = await Self.onLoop(loop) {
            let mark = sent.count
            radio.walkOutOfRange()
            return mark
        }
        // Both links reported lost as a supervision timeout reports it, each followed by the slots it freed.
        let dropped = sent.connections(from: walkedOut)
        #expect(dropped.map(\.address) == [Self.strap, Self.thermometer])
        #expect(dropped.allSatisfy { !$0.connected && $0.error == 0x08 })
        #expect(sent.slots(from: walkedOut).map(\.free) == [1, 2])
        #expect(sent.slots(from: walkedOut).last?.allocated == [])
        let (free, links) = await Self.onLoop(loop) { (radio.state.value.slots.free, radio.state.value.phases.count) }
        #expect(free == 2 && links == 0)

        // Ten of the radio's ticks (each advertising interval of both devices is one): any advertisement of either
        // would have gone out in one of them. Counted, not timed, so a loaded machine cannot shorten the window.
        let ticksAtWalk = await Self.onLoop(loop) { radio.state.value.ticks }
        #expect(await eventually(timeout: .seconds(20)) { await Self.onLoop(loop) { radio.state.value.ticks } >= ticksAtWalk + 10 })
        #expect(sent.advertised(from: walkedOut).isEmpty)
        #expect(await Self.onLoop(loop) { radio.state.value.batcher.isEmpty })

        // A connect now is one to a device the proxy does not hear: it holds a slot until the connect timeout, then 0x3E.
        let refusedFrom = sent.count
        loop.execute { radio.handle(Self.connect(Self.strap), from: client) }
        #expect(await eventually(timeout: .seconds(20)) { !sent.connections(from: refusedFrom).isEmpty })
        let refusal = sent.connections(from: refusedFrom)
        #expect(refusal.map(\.connected) == [false] && refusal.first?.error == 0x3E)
        #expect(sent.slots(from: refusedFrom).map(\.free) == [1, 2])
        #expect(sent.advertised(from: walkedOut).isEmpty)

        let cameBack = await Self.onLoop(loop) {
            let mark = sent.count
            radio.walkBackIntoRange()
            return mark
        }
        #expect(await eventually(timeout: .seconds(20)) { Set(sent.advertised(from: cameBack)) == [Self.strap, Self.thermometer] })
        // No link came back by itself.
        #expect(sent.connections(from: cameBack).isEmpty)
        loop.execute { radio.handle(Self.connect(Self.strap), from: client) }
        #expect(await eventually(timeout: .seconds(20)) { sent.connections(from: cameBack).contains { $0.connected && $0.address == Self.strap } })
        #expect(sent.slots(from: cameBack).last?.allocated == [Self.strap])

        await Self.onLoop(loop) { radio.shutDown() }
    }

    @Test("wear2mqtt-sim proxy on SIGUSR1 drops the strap's link with 0x08 and goes quiet; on SIGUSR2 it is heard and connects again")
    func processWalksOnSignals() async throws {
        let directory = try TemporaryDirectory(prefix: "esphome-walk")
        defer { directory.remove() }
        let port = try FreePort.loopback()
        let name = "proxy-walk"
        let proxy = try ChildProcess(executable: SimulatorProcess.executablePath,
                                     arguments: ["proxy", "--port", "\(port)", "--name", name, "--slots", "2",
                                                 "--scenario", try directory.write("scenario.yaml", Self.scenario)],
                                     outputPath: directory.file("proxy.out"), errorPath: directory.file("proxy.err"))
        defer { proxy.signal(SIGKILL) }
        #expect(try await proxy.waitForErrorOutput(timeout: .seconds(60)) { $0.contains("serving ESPHome's API") })
        // The script sends the signals to the proxy's pid itself, between what it checks (esphome_interop.py's walk_session).
        let client = try ChildProcess(executable: try TestTools.require(TestTools.python),
                                      arguments: [ESPHomeProxyInteropTests.script, "\(port)", name, "--slots", "2",
                                                  "--strap", "C0:FF:EE:00:00:01", "--walk", "\(proxy.pid)"],
                                      outputPath: directory.file("client.out"), errorPath: directory.file("client.err"))
        let status = await client.waitForExit(timeout: .seconds(90))
        if status == nil { client.signal(SIGKILL) }
        #expect(status == 0, "\(client.output)\(client.errorOutput)\(proxy.errorOutput)")
        #expect(client.output.hasPrefix("PASS"), "\(client.output)\(client.errorOutput)")
        #expect(client.output.contains("dropped(error=8) free_after_drop=2/2 heard_out_of_range=0"), "\(client.output)")
        #expect(client.output.contains("connect_out_of_range=refused(connected=False,error=62)"), "\(client.output)")
        #expect(client.output.contains("heard_again=True connected_again=True"), "\(client.output)")
        let log = proxy.errorOutput
        #expect(log.contains("devices walked out of range") && log.contains("devices back in range"), "\(log)")
        #expect(proxy.isRunning, "the signals took the proxy down: \(log)")
        await proxy.stop()
    }
}
