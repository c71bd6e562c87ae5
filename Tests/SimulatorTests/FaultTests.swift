import DBus
import Simulator
import Testing
import Wear2MQTTTesting

/// Field problems injected through the control interface and the scenario timeline.
@Suite(.timeLimit(.minutes(2)))
struct FaultTests {
    static let strapPath = SimulatorHarness.devicePath(SimulatorHarness.strap)

    @Test func anInjectedInProgressFailsTheNextConnectOnlyAndARetrySucceeds() async throws {
        try await SimulatorHarness.with { harness in
            try await harness.discover(SimulatorHarness.strap)
            try await harness.control.failNextCall(SimulatorHarness.strap, method: "Connect")
            await #expect(throws: BusError.remote(name: "org.bluez.Error.InProgress", message: "Operation already in progress")) {
                try await harness.call(Self.strapPath, "org.bluez.Device1", "Connect")
            }
            try await harness.call(Self.strapPath, "org.bluez.Device1", "Connect")
            #expect(try await harness.property(Self.strapPath, "org.bluez.Device1", "Connected") == true)
        }
    }

    @Test func refusedConnectsFailWithTheNamedErrorThenConnect() async throws {
        try await SimulatorHarness.with { harness in
            try await harness.discover(SimulatorHarness.strap)
            try await harness.control.refuseConnects(SimulatorHarness.strap, count: 2)
            for _ in 0..<2 {
                await #expect(throws: BusError.remote(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")) {
                    try await harness.call(Self.strapPath, "org.bluez.Device1", "Connect")
                }
            }
            try await harness.control.refuseConnects(SimulatorHarness.strap, count: 1, error: "org.bluez.Error.ConnectionAttemptFailed")
            await #expect(throws: BusError.remote(name: "org.bluez.Error.ConnectionAttemptFailed", message: "Page Timeout")) {
                try await harness.call(Self.strapPath, "org.bluez.Device1", "Connect")
            }
            try await harness.call(Self.strapPath, "org.bluez.Device1", "Connect")
        }
    }

    @Test func aSilentDeviceConnectsWhenItAdvertisesAgainAndLatencySlowsAnswers() async throws {
        try await SimulatorHarness.with { harness in
            try await harness.discover(SimulatorHarness.strap)
            try await harness.control.setAdvertising(SimulatorHarness.strap, false)
            // Two Connects at once: one starts the attempt, which waits for the silent strap to advertise; the other
            // is refused, as BlueZ refuses a second.
            let (outcomes, outcome) = AsyncStream.makeStream(of: Result<Bool, BusError>.self)
            for _ in 0..<2 {
                Task {
                    do throws(BusError) {
                        try await harness.call(Self.strapPath, "org.bluez.Device1", "Connect")
                        outcome.yield(.success(true))
                    } catch {
                        outcome.yield(.failure(error))
                    }
                }
            }
            var finished = outcomes.makeAsyncIterator()
            #expect(await finished.next() == .failure(.remote(name: "org.bluez.Error.Failed", message: "Operation already in progress")))
            // The thermometer's attempt starts after the strap's and waits the same connect delay: once it has
            // connected, the strap's delay is over too, and the strap is still waiting for an advertisement.
            try await harness.connect(SimulatorHarness.thermometer)
            #expect(try await harness.property(Self.strapPath, "org.bluez.Device1", "Connected") == false)
            try await harness.control.setAdvertising(SimulatorHarness.strap, true)
            #expect(await finished.next() == .success(true), "the strap connected once it advertised")
            try await harness.control.setLatency(SimulatorHarness.strap, milliseconds: 300)
            let started = ContinuousClock.now
            try await harness.call(Self.strapPath, "org.bluez.Device1", "Connect")
            #expect(ContinuousClock.now - started >= .milliseconds(300))
        }
    }

    @Test func aDeviceEventWithoutAReceiverIsRefusedAndTheTagButtonNotifies() async throws {
        try await SimulatorHarness.with { harness in
            await #expect(throws: BusError.self) { try await harness.control.raiseEvent(SimulatorHarness.strap, .buttonPress) }
            try await harness.connect(SimulatorHarness.tag)
            let tagPath = SimulatorHarness.devicePath(SimulatorHarness.tag)
            let button = try await GATTTests.characteristic(0xFFE1, of: tagPath, in: harness)
            try await harness.call(button, "org.bluez.GattCharacteristic1", "StartNotify")
            let mark = harness.signals.mark
            try await harness.control.raiseEvent(SimulatorHarness.tag, .findMyPhone)
            let pressed = try await harness.signals.next(after: mark) { $0.changes(button, "org.bluez.GattCharacteristic1")?["Value"] != nil }
            #expect(pressed.changes(button, "org.bluez.GattCharacteristic1")?["Value"] == .bytes([0x02]))
            await #expect(throws: BusError.self) { try await harness.control.dropLink("C0:FF:EE:00:00:09") }
        }
    }

    @Test func theScenarioTimelineDropsTheLinkAtItsTime() async throws {
        try await SimulatorHarness.with(SimulatorHarness.scenario(extra: """
        faults:
          - { at: 15s, action: drop_link, device: \(SimulatorHarness.strap) }
          - { at: 30s, action: drop_link, device: \(SimulatorHarness.strap) }
          - { at: 45s, action: drop_link, device: \(SimulatorHarness.strap) }
        """)) { harness in
            // A drop finds something to drop only once the link is up. 15 s leaves it time on a loaded machine,
            // but not always: with the whole suite on two cores beside a fuzzer the connection once came after
            // 15 s, and once the drop came before its services were resolved (so `connect` never saw them). The
            // timeline drops the link again at 30 and 45 s, and whichever drop comes first once the link is up is
            // the one seen (on a quiet machine, the first).
            try? await harness.connect(SimulatorHarness.strap)
            _ = try await harness.signals.next(within: .seconds(50)) {
                $0.changes(Self.strapPath, "org.bluez.Device1")?["Connected"] == false
            }
        }
    }
}
