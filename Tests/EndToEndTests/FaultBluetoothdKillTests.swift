import Foundation
import Testing
import Wear2MQTTTesting

/// Fault matrix (issue 24, docs/reliability.md "Fault matrix"): the process that owns `org.bluez` — bluetoothd, here
/// the simulator — is killed with SIGKILL while a strap streams, and started again as systemd would. The gateway
/// must notice the stack went, wait for it, and have samples flowing again within 5 s of its return, with no request.
@Suite
struct FaultBluetoothdKillTests {
    static let strap = "C0:FF:EE:00:00:51"

    @Test func samplesAreBackWithinFiveSecondsOfARestartedBluetoothd() async throws {
        try await Stack.with(scenarioDevices: """
          - kind: heart_rate_strap
            address: \(Self.strap)
            advertising_interval: 100ms
            options: { rate_hz: 5 }
        """, configuredDevices: "  - address: \(Self.strap)\n    name: strap\n") { stack in
            func samples() -> Int { stack.payloads("strap/sensor/heart_rate").count }
            try #require(await stack.until(timeout: .seconds(45)) { samples() >= 5 }, "the strap never streamed")

            let availabilityBefore = stack.payloads("strap/availability").count
            let killed = ContinuousClock.now
            // A sample stamped after the kill came through the new process: the killed one sends nothing more.
            let killedAt = Self.unixMilliseconds()
            try await stack.killAndRestartSimulator()
            // Until the new process answers on the bus it has not "returned"; the figure counts from that moment.
            // eventually: the restarted simulator's bus name, asked over its control interface.
            let answering = await eventually(timeout: .seconds(30), interval: .milliseconds(10)) {
                (try? await stack.control.listDevices())?.isEmpty == false
            }
            try #require(answering, "the restarted simulator never answered: \(stack.simulator.errorOutput.suffix(800))")
            let returned = ContinuousClock.now
            func newSamples() -> Int {
                stack.payloads("strap/sensor/heart_rate").compactMap(stack.json).filter {
                    ($0["ts"] as? NSNumber).map { $0.int64Value > killedAt } ?? false
                }.count
            }
            let back = await stack.until(timeout: .seconds(60)) { newSamples() > 0 }
            try #require(back, "no sample after bluetoothd returned; gateway log: \(stack.gateway.child.errorOutput.suffix(1500))")
            let delay = ContinuousClock.now - returned
            print("figure: bluetoothd (simulator) SIGKILL mid-stream: first sample \(Self.seconds(delay)) s after it answered on the bus again (\(Self.seconds(ContinuousClock.now - killed)) s after the kill)")
            #expect(delay <= .seconds(5), "samples came back \(delay) after bluetoothd returned")
            #expect(stack.payloads("strap/availability").dropFirst(availabilityBefore).contains(#"{"state":"offline"}"#),
                    "the strap was reported offline while bluetoothd was gone")
            #expect(await stack.until { newSamples() >= 5 }, "the stream goes on")
            #expect(stack.payloads("strap/availability").last == #"{"state":"online"}"#)
        }
    }

    static func unixMilliseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    static func seconds(_ duration: Duration) -> String {
        String(format: "%.2f", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }
}
