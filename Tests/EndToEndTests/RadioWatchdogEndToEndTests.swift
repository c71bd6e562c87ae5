import Foundation
import Simulator
import Testing
import Wear2MQTTTesting

/// The radio watchdog (docs/radios.md, "Watchdog") against the simulator's radio faults, in the built gateway: a
/// deaf scanner cured by restarting discovery, one cured only by a power cycle, discovery stuck InProgress, and the
/// adapter removed and restored while a strap streams. Short windows (silence 5 s, grace 2 s, a look every second) so
/// each fault plays out in seconds.
@Suite
struct RadioWatchdogEndToEndTests {
    /// A beacon the adapter hears all the time.
    static let beacon = "  - kind: heart_rate_strap\n    address: C0:FF:EE:00:00:71\n    advertising_interval: 100ms"
    static let watchdog = "watchdog:\n  silence_s: 5\n  grace_s: 2\n  interval_s: 1"

    /// The `radio_changed` events' data, in order.
    static func radioEvents(_ stack: Stack) -> [[String: Any]] {
        stack.payloads("bridge/event").compactMap(stack.json).filter { $0["type"] as? String == "radio_changed" }
            .compactMap { $0["data"] as? [String: Any] }
    }

    /// The adapter's entry in the last `bridge/info`.
    static func adapterEntry(_ stack: Stack) -> [String: Any]? {
        (stack.last("bridge/info")?["adapters"] as? [[String: Any]])?.first { $0["id"] as? String == "hci0" }
    }

    static func discovering(_ stack: Stack) -> Bool { adapterEntry(stack)?["discovering"] as? Bool == true }

    /// A two-minute scan keeps discovery on for the whole test (a session looking for an absent device would stop
    /// and start it every 20 s, which cures a scanner deaf until a restart by itself); returns once the beacon was
    /// heard in it (its `device_found`), since a radio that never heard anyone is not judged.
    static func scanUntilTheBeaconIsHeard(_ stack: Stack) async throws {
        try #require(await stack.until(timeout: .seconds(30)) { adapterEntry(stack)?["state"] as? String == "ok" },
                     "the watchdog never reported hci0: \(String(describing: stack.last("bridge/info")))")
        try await stack.request("bridge/request/scan", #"{"duration_s":120,"transaction":"long"}"#)
        try #require(await stack.until(timeout: .seconds(30)) {
            stack.payloads("bridge/event").contains { $0.contains("device_found") && $0.contains("C0:FF:EE:00:00:71") }
        }, "the scan never heard the beacon")
    }

    @Test func aDeafScannerIsCuredByRestartingDiscoveryAndReported() async throws {
        try await Stack.with(scenarioDevices: Self.beacon, configuredDevices: nil, gatewayExtra: Self.watchdog) { stack in
            try await Self.scanUntilTheBeaconIsHeard(stack)
            try await stack.control.deafenScanner(clearedBy: .restart)
            #expect(await stack.until(timeout: .seconds(30)) {
                Self.radioEvents(stack).contains { $0["state"] as? String == "recovering" && $0["symptom"] as? String == "silent"
                    && $0["step"] as? String == "restart_discovery" }
            }, "events: \(Self.radioEvents(stack))")
            #expect(await stack.until(timeout: .seconds(30)) { Self.radioEvents(stack).last?["state"] as? String == "ok" },
                    "events: \(Self.radioEvents(stack))")
            // No power cycle was needed.
            let inspected = try await stack.control.inspect("")
            #expect(inspected["scanner_deaf"] == "no" && inspected["power_offs"] == "0", "\(inspected)")
            // bridge/info follows the event (published after it): waited for, not read at once.
            #expect(await stack.until(timeout: .seconds(10)) {
                Self.adapterEntry(stack)?["state"] as? String == "ok" && Self.adapterEntry(stack)?["steps"] as? Int == 1
            }, "\(String(describing: Self.adapterEntry(stack)))")
        }
    }

    @Test func aScannerOnlyAPowerCycleCuresIsPowerCycledAfterTheRestartFails() async throws {
        try await Stack.with(scenarioDevices: Self.beacon, configuredDevices: nil, gatewayExtra: Self.watchdog) { stack in
            try await Self.scanUntilTheBeaconIsHeard(stack)
            try await stack.control.deafenScanner(clearedBy: .power)
            #expect(await stack.until(timeout: .seconds(45)) {
                Self.radioEvents(stack).contains { $0["state"] as? String == "recovering" && $0["step"] as? String == "reset" }
            }, "events: \(Self.radioEvents(stack))")
            #expect(await stack.until(timeout: .seconds(30)) { Self.radioEvents(stack).last?["state"] as? String == "ok" && Self.discovering(stack) },
                    "events: \(Self.radioEvents(stack)); info: \(String(describing: stack.last("bridge/info")))")
            let inspected = try await stack.control.inspect("")
            #expect(inspected["scanner_deaf"] == "no" && inspected["power_offs"] == "1" && inspected["power_ons"] == "1", "\(inspected)")
            #expect(Self.radioEvents(stack).map { $0["step"] as? String ?? "-" }.filter { $0 != "-" } == ["restart_discovery", "reset"])
        }
    }

    @Test func discoveryStuckInProgressIsPowerCycledAndDiscoveryResumes() async throws {
        try await Stack.with(scenarioDevices: Self.beacon, configuredDevices: nil, gatewayExtra: Self.watchdog) { stack in
            try await Self.scanUntilTheBeaconIsHeard(stack)
            try await stack.control.stickDiscovery()
            #expect(await stack.until(timeout: .seconds(30)) {
                Self.radioEvents(stack).contains { $0["symptom"] as? String == "not_discovering" && $0["step"] as? String == "reset" }
            }, "events: \(Self.radioEvents(stack))")
            #expect(await stack.until(timeout: .seconds(30)) { Self.radioEvents(stack).last?["state"] as? String == "ok" && Self.discovering(stack) },
                    "events: \(Self.radioEvents(stack))")
            let inspected = try await stack.control.inspect("")
            #expect(inspected["discovery_stuck"] == "no", "\(inspected)")
        }
    }

    @Test func anAdapterRemovedAndRestoredIsReportedAndItsStrapStreamsAgain() async throws {
        let scenario = "  - kind: heart_rate_strap\n    address: C0:FF:EE:00:00:72\n    advertising_interval: 100ms\n    options: { rate_hz: 5 }"
        let configured = "  - address: C0:FF:EE:00:00:72\n    name: strap"
        try await Stack.with(scenarioDevices: scenario, configuredDevices: configured, gatewayExtra: Self.watchdog) { stack in
            func online() -> Bool { stack.payloads("strap/availability").last == #"{"state":"online"}"# }
            try #require(await stack.until(timeout: .seconds(45)) { online() && !stack.payloads("strap/sensor/heart_rate").isEmpty })
            try #require(await stack.until(timeout: .seconds(10)) { Self.adapterEntry(stack)?["state"] as? String == "ok" })
            try await stack.control.removeAdapter()
            #expect(await stack.until(timeout: .seconds(30)) {
                Self.radioEvents(stack).last?["state"] as? String == "absent" && !online()
            }, "events: \(Self.radioEvents(stack))")
            // Still listed while gone, as absent, with a sentence (bridge/info follows the event).
            #expect(await stack.until(timeout: .seconds(10)) {
                Self.adapterEntry(stack)?["state"] as? String == "absent"
                    && Self.adapterEntry(stack)?["reason"] as? String == "the adapter is gone from BlueZ"
            }, "\(String(describing: Self.adapterEntry(stack)))")
            let samples = stack.payloads("strap/sensor/heart_rate").count
            try await stack.control.restoreAdapter()
            #expect(await stack.until(timeout: .seconds(30)) { Self.radioEvents(stack).last?["state"] as? String == "ok" },
                    "events: \(Self.radioEvents(stack))")
            #expect(await stack.until(timeout: .seconds(60)) { online() && stack.payloads("strap/sensor/heart_rate").count >= samples + 3 },
                    "gateway log: \(stack.gateway.child.errorOutput.suffix(1500))")
        }
    }
}
