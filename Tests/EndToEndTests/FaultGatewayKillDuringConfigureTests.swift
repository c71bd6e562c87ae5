import Foundation
import Testing
import Wear2MQTTTesting

/// Fault matrix (issue 24, docs/reliability.md "Fault matrix"): the gateway killed with SIGKILL while a
/// `settings` request (configure) is on its way to a GoFIT band, each GATT operation slowed to 300 ms so the kill
/// lands mid-request: once the request's first frame reached the band (before the write), and once the band took
/// the write but before the gateway could answer or publish it. After the restart the band has either the old
/// settings or the new ones — never a mix — and the retained state says exactly what the band has (read back from
/// the band with a fresh `settings` request).
@Suite
struct FaultGatewayKillDuringConfigureTests {
    static let band = GoFITEndToEndTests.band

    static func stepGoal(_ value: Any?) -> Int? { ((value as? [String: Any])?["step_goal"] as? NSNumber)?.intValue }

    enum KillPoint: String, CaseIterable, Sendable {
        case requestReachedTheBand = "the first frame reached the band"
        case bandTookTheWrite = "the band took the write"
    }

    @Test(arguments: KillPoint.allCases)
    func afterAKillMidConfigureTheBandHasOldOrNewSettingsAndTheStateSaysWhich(_ point: KillPoint) async throws {
        try await Stack.with(scenarioDevices: GoFITEndToEndTests.scenario(options: "{ history_days: 0 }"),
                             configuredDevices: GoFITEndToEndTests.configuredDevices) { stack in
            try await GoFITKillDuringSyncTests.pair(stack)
            try #require(await stack.until(timeout: .seconds(30)) { Self.stepGoal(stack.last("band")?["settings"]) != nil })
            let old = try #require(Self.stepGoal(stack.last("band")?["settings"]))
            let new = old == 12_345 ? 12_346 : 12_345
            let oldFormat = (stack.last("band")?["settings"] as? [String: Any])?["time_format"] as? String
            let newFormat = oldFormat == "12" ? "24" : "12"
            let writesBefore = Int(try await stack.control.inspect(Self.band)["settings_writes"] ?? "") ?? -1
            let requestsBefore = Int(try await stack.control.inspect(Self.band)["requests"] ?? "") ?? -1

            try await stack.control.setLatency(Self.band, milliseconds: 300)
            try await stack.request("band/request/settings", #"{"step_goal":\#(new),"time_format":"\#(newFormat)","transaction":"cfg"}"#)
            // eventually: the band's progress, asked over the simulator's control interface (the kill must land there).
            try #require(await eventually(timeout: .seconds(30), interval: .milliseconds(5)) {
                let shown = (try? await stack.control.inspect(Self.band)) ?? [:]
                switch point {
                case .requestReachedTheBand: return (Int(shown["requests"] ?? "") ?? -1) > requestsBefore
                case .bandTookTheWrite: return (Int(shown["settings_writes"] ?? "") ?? -1) > writesBefore
                }
            })
            // The link stays slow across the restart, as a real one would: a write the old process had handed to
            // BlueZ goes out before the new process's reads (ATT takes one request at a time on a link).
            try await stack.killAndRestartGateway()
            let restarted = ContinuousClock.now
            let statesBefore = stack.payloads("band").count

            // The new process shows the kept state (issue 38), connects, and reads the settings from the band.
            #expect(await stack.until(timeout: .seconds(60)) {
                stack.payloads("band").dropFirst(statesBefore).compactMap(stack.json).contains { $0["connection"] as? String == "connected" }
            }, "log: \(stack.gateway.child.errorOutput.suffix(1500))")
            let read = try await stack.requestWhenReady("band", "settings")
            let onBand = try #require(read?["data"] as? [String: Any], "\(String(describing: read))")
            let bandGoal = Self.stepGoal(onBand["settings"])
            let bandFormat = (onBand["settings"] as? [String: Any])?["time_format"] as? String
            let writes = Int(try await stack.control.inspect(Self.band)["settings_writes"] ?? "") ?? -1
            #expect(bandGoal == old || bandGoal == new)
            // One write carries both values: both old, or both new.
            #expect((bandGoal == new) == (bandFormat == newFormat), "a mix: step_goal \(String(describing: bandGoal)), time_format \(String(describing: bandFormat))")
            #expect((bandGoal == new) == (writes > writesBefore), "the band has the new settings only if the write reached it")
            if point == .bandTookTheWrite {
                #expect(bandGoal == new)
                }
            #expect(await stack.until { Self.stepGoal(stack.last("band")?["settings"]) == bandGoal },
                    "the retained state says what the band has")
            // The answer went out only if the old process got that far; if it did, it tells the truth.
            let answers = stack.payloads("band/response/settings").compactMap(stack.json).filter { $0["transaction"] as? String == "cfg" }
            #expect(answers.allSatisfy { $0["status"] as? String == "ok" && bandGoal == new }, "\(answers)")
            print("figure: gateway SIGKILL mid settings request once \(point.rawValue): band has the \(bandGoal == new ? "new" : "old") settings (writes \(writesBefore) → \(writes)), \(answers.isEmpty ? "not answered" : "answered before the kill"); state matched the band \(FaultBluetoothdKillTests.seconds(ContinuousClock.now - restarted)) s after the restart")
        }
    }
}
