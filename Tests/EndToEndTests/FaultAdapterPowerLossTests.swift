import Foundation
import Testing
import Wear2MQTTTesting

/// Fault matrix (issue 24, docs/reliability.md "Fault matrix"): the adapter loses power while three straps stream
/// (the simulator's `SetPowered`, what `bluetoothctl power off` or a pulled USB dongle's rfkill looks like to
/// BlueZ). Every device goes offline and `bridge/health` stops calling the gateway healthy; when power returns
/// every device is back online and streaming, with no request.
@Suite
struct FaultAdapterPowerLossTests {
    static let straps = (1...3).map { (id: "strap\($0)", address: String(format: "C0:FF:EE:00:00:%02X", 0x60 + $0)) }

    @Test func devicesGoOfflineWithThePowerAndComeBackWithIt() async throws {
        let scenario = Self.straps.map {
            "  - kind: heart_rate_strap\n    address: \($0.address)\n    advertising_interval: 100ms\n    options: { rate_hz: 5 }"
        }.joined(separator: "\n")
        let configured = Self.straps.map { "  - address: \($0.address)\n    name: \($0.id)" }.joined(separator: "\n")
        try await Stack.with(scenarioDevices: scenario, configuredDevices: configured) { stack in
            func online(_ id: String) -> Bool { stack.payloads("\(id)/availability").last == #"{"state":"online"}"# }
            func offline(_ id: String) -> Bool { stack.payloads("\(id)/availability").last == #"{"state":"offline"}"# }
            try #require(await stack.until(timeout: .seconds(60)) {
                Self.straps.allSatisfy { online($0.id) && !stack.payloads("\($0.id)/sensor/heart_rate").isEmpty }
            }, "the straps never streamed")

            let powerOff = ContinuousClock.now
            try await stack.control.setPowered(false)
            #expect(await stack.until(timeout: .seconds(30)) { Self.straps.allSatisfy { offline($0.id) } })
            let offlineAfter = ContinuousClock.now - powerOff
            try await stack.request("bridge/request/health_check", #"{"transaction":"dark"}"#)
            let dark = await stack.response("bridge/response/health_check", transaction: "dark")
            let darkData = dark?["data"] as? [String: Any]
            #expect(darkData?["healthy"] as? Bool == false && darkData?["bluetooth"] as? Bool == false, "\(String(describing: dark))")

            let powerOn = ContinuousClock.now
            let poweredAt = FaultBluetoothdKillTests.unixMilliseconds()
            try await stack.control.setPowered(true)
            func streaming(_ id: String) -> Bool {
                stack.payloads("\(id)/sensor/heart_rate").compactMap(stack.json).contains {
                    ($0["ts"] as? NSNumber).map { $0.int64Value > poweredAt } ?? false
                }
            }
            #expect(await stack.until(timeout: .seconds(60)) {
                Self.straps.allSatisfy { online($0.id) && streaming($0.id) }
            }, "gateway log: \(stack.gateway.child.errorOutput.suffix(1500))")
            let backAfter = ContinuousClock.now - powerOn
            try await stack.request("bridge/request/health_check", #"{"transaction":"light"}"#)
            let light = await stack.response("bridge/response/health_check", transaction: "light")
            #expect((light?["data"] as? [String: Any])?["healthy"] as? Bool == true, "\(String(describing: light))")
            print("figure: adapter power loss: 3 of 3 straps offline \(FaultBluetoothdKillTests.seconds(offlineAfter)) s after power off; all online and streaming \(FaultBluetoothdKillTests.seconds(backAfter)) s after power on")
        }
    }
}
