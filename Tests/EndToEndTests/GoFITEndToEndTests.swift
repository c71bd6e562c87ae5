import Foundation
import Simulator
import Testing
import Wear2MQTTTesting

/// A GoFIT Care-Xc over the whole product: the simulator serves the band (standard services plus our modeled
/// vendor service, docs/protocols/gofit.md), the gateway's `gofit` driver pairs it with the code the band
/// shows, syncs its history, sets its settings and runs its commands from MQTT.
@Suite(.timeLimit(.minutes(4)))
struct GoFITEndToEndTests {
    static let band = "C0:F1:70:00:00:01"

    static func scenario(options: String = "{}") -> String {
        """
          - kind: gofit_care_xc
            address: \(band)
            advertising_interval: 100ms
            options: \(options)
        """
    }

    static let configuredDevices = """
      - address: \(band)
        name: band
    """

    func error(_ response: [String: Any]?) -> (code: String?, vendor: Int?) { Stack.error(response) }

    func lastState(_ stack: Stack) -> [String: Any]? { stack.last("band") }

    func inspect(_ stack: Stack) async throws -> [String: String] { try await stack.control.inspect(Self.band) }

    /// `device/pair`, then `device/pair/confirm` with the code the band shows.
    func pair(_ stack: Stack) async throws {
        #expect(await eventually(timeout: .seconds(45)) { lastState(stack)?["pairing"] as? String == "required" })
        try await stack.request("bridge/request/device/pair", #"{"id":"band","transaction":"pair"}"#)
        let started = await stack.response("bridge/response/device/pair", transaction: "pair")
        #expect(started?["status"] as? String == "ok")
        let code = try await inspect(stack)["pairing_code"] ?? ""
        try await stack.request("bridge/request/device/pair/confirm", #"{"id":"band","code":"\#(code)","transaction":"confirm"}"#)
        let confirmed = await stack.response("bridge/response/device/pair/confirm", transaction: "confirm")
        #expect(confirmed?["status"] as? String == "ok")
        #expect(await eventually(timeout: .seconds(20)) { lastState(stack)?["settings"] != nil })
    }

    @Test func wrongCodeFailsRightCodePairsAndTheKeySurvivesARestart() async throws {
        try await Stack.with(scenarioDevices: Self.scenario(), configuredDevices: Self.configuredDevices) { stack in
            // Unpaired: the state says so and one pairing_required event tells the user what to do.
            #expect(await eventually(timeout: .seconds(45)) { lastState(stack)?["pairing"] as? String == "required" })
            #expect(await eventually { stack.payloads("band/event").compactMap(stack.json).contains { $0["event"] as? String == "pairing_required" } })
            // Commands that need the pairing say so, naming the way out.
            try await stack.request("band/request/find", #"{"vibrations":2,"transaction":"early"}"#)
            #expect(error(await stack.response("band/response/find", transaction: "early")).code == "PAIRING_REQUIRED")
            // The standard services need no pairing: refresh reads battery and Device Information.
            try await stack.request("band/get", #"{"transaction":"r0"}"#)
            let refreshed = await stack.response("band/response/refresh", transaction: "r0")
            #expect((refreshed?["data"] as? [String: Any])?["serial"] as? String == "CXC0000001")

            try await stack.request("bridge/request/device/pair", #"{"id":"band","transaction":"p1"}"#)
            let started = try #require(await stack.response("bridge/response/device/pair", transaction: "p1"))
            let data = try #require(started["data"] as? [String: Any])
            #expect(data["state"] as? String == "code_required")
            #expect((data["pairing_time"] as? Int ?? 0) > 1_600_000_000_000)
            let code = try #require(try await inspect(stack)["pairing_code"])
            #expect(code.count == 4)

            let wrong = String(format: "%04d", ((Int(code) ?? 0) + 1) % 10_000)
            try await stack.request("bridge/request/device/pair/confirm", #"{"id":"band","code":"\#(wrong)","transaction":"c1"}"#)
            let refused = error(await stack.response("bridge/response/device/pair/confirm", transaction: "c1"))
            #expect(refused.code == "PAIRING_FAILED")
            #expect(refused.vendor == 14)
            try await stack.request("bridge/request/device/pair/confirm", #"{"id":"band","code":"12x4","transaction":"c2"}"#)
            #expect(error(await stack.response("bridge/response/device/pair/confirm", transaction: "c2")).code == "INVALID_VALUE")

            try await stack.request("bridge/request/device/pair/confirm", #"{"id":"band","code":"\#(code)","transaction":"c3"}"#)
            let confirmed = await stack.response("bridge/response/device/pair/confirm", transaction: "c3")
            #expect(confirmed?["status"] as? String == "ok")
            #expect(await eventually { lastState(stack)?["pairing"] as? String == "paired" })
            #expect(await eventually { lastState(stack)?["mac"] != nil && lastState(stack)?["settings"] != nil })

            // The key is in the state directory, readable by the gateway's user only.
            let file = stack.broker.directory.file("state") + "/drivers/c0f170000001/credentials.json"
            let attributes = try FileManager.default.attributesOfItem(atPath: file)
            #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o077 } == 0)

            // A restart authenticates with the stored key: paired again, no new pairing_required event.
            let eventsBefore = stack.payloads("band/event").count
            let statesBefore = stack.payloads("band").count
            try await stack.restartGateway()
            // (The old gateway's last states, `disconnecting`, still say paired: wait for the new one's connection.)
            #expect(await eventually(timeout: .seconds(45)) {
                stack.payloads("band").dropFirst(statesBefore).compactMap(stack.json).contains {
                    $0["pairing"] as? String == "paired" && $0["connection"] as? String == "connected"
                }
            })
            try await stack.request("band/request/find", #"{"vibrations":3,"transaction":"f1"}"#)
            #expect(await stack.response("band/response/find", transaction: "f1")?["status"] as? String == "ok")
            #expect(try await inspect(stack)["vibrations"] == "3")
            #expect(stack.payloads("band/event").count == eventsBefore)
        }
    }

    @Test func aLostResponseIsAskedForAgainAndNotExecutedTwice() async throws {
        try await Stack.with(scenarioDevices: Self.scenario(options: "{ lose_responses: 1 }"),
                             configuredDevices: Self.configuredDevices) { stack in
            // The band swallows its answer to PAIR_START; after 3 s of silence the gateway sends the request
            // again with the same sequence number, and the band answers from its cache: one code, shown once.
            #expect(await eventually(timeout: .seconds(45)) { lastState(stack)?["pairing"] as? String == "required" })
            try await stack.request("bridge/request/device/pair", #"{"id":"band","transaction":"p"}"#)
            let started = await stack.response("bridge/response/device/pair", transaction: "p")
            #expect(started?["status"] as? String == "ok")
            let band = try await inspect(stack)
            #expect(band["retransmissions_answered"] == "1")
            let code = try #require(band["pairing_code"])
            try await stack.request("bridge/request/device/pair/confirm", #"{"id":"band","code":"\#(code)","transaction":"c"}"#)
            #expect(await stack.response("bridge/response/device/pair/confirm", transaction: "c")?["status"] as? String == "ok")
        }
    }

    @Test func aSyncWithTheLinkDroppedHalfWayDeliversEveryRecordExactlyOnce() async throws {
        try await Stack.with(scenarioDevices: Self.scenario(options: "{ history_days: 2, drop_after_pages: 3 }"),
                             configuredDevices: Self.configuredDevices) { stack in
            try await pair(stack)
            let held = Int(try await inspect(stack)["history_records"] ?? "") ?? 0
            #expect(held > 200)

            try await stack.request("band/request/sync", #"{"transaction":"s1"}"#)
            // The band drops the link after the third page: the request fails, the sync resumes by itself.
            let first = await stack.response("band/response/sync", transaction: "s1")
            #expect(error(first).code == "DEVICE_DISCONNECTED")
            #expect(await eventually(timeout: .seconds(90)) {
                (lastState(stack)?["sync"] as? [String: Any])?["state"] as? String == "idle"
            })
            let kinds = ["steps", "sleep", "heart_rate", "spo2", "activity"]
            func records() -> [[String: Any]] { kinds.flatMap { stack.payloads("band/fitness/\($0)").compactMap(stack.json) } }
            #expect(await eventually(timeout: .seconds(10)) { records().count >= held })
            let ids = records().compactMap { $0["id"] as? String }
            #expect(ids.count == held)
            #expect(Set(ids).count == ids.count)
            let activity = try #require(stack.payloads("band/fitness/activity").compactMap(stack.json).first)
            #expect(((activity["gps"] as? [Any])?.count ?? 0) > 100)
            #expect(((activity["laps"] as? [Any])?.count ?? 0) >= 1)

            // A second sync publishes nothing new.
            try await stack.request("band/request/sync", #"{"transaction":"s2"}"#)
            let second = try #require(await stack.response("band/response/sync", transaction: "s2"))
            #expect(second["status"] as? String == "ok")
            let counts = (second["data"] as? [String: Any])?["records"] as? [String: Any]
            #expect(kinds.allSatisfy { counts?[$0] as? Int == 0 })
            #expect(records().count == held)
        }
    }

    @Test func settingsRoundTripAndEveryKindOfInvalidValueChangesNothing() async throws {
        try await Stack.with(scenarioDevices: Self.scenario(), configuredDevices: Self.configuredDevices) { stack in
            try await pair(stack)
            try await stack.request("band/set", #"{"step_goal":8000,"time_format":"24","idle_alert":{"start":"09:30","days":["mon","fri"]},"transaction":"ok"}"#)
            let applied = await stack.response("band/response/settings", transaction: "ok")
            #expect(applied?["status"] as? String == "ok")
            #expect(await eventually {
                let settings = lastState(stack)?["settings"] as? [String: Any]
                let idle = settings?["idle_alert"] as? [String: Any]
                return settings?["step_goal"] as? Int == 8000 && idle?["start"] as? String == "09:30"
                    && idle?["days"] as? [String] == ["mon", "fri"] && idle?["end"] != nil
            })
            let writes = try await inspect(stack)["settings_writes"]

            let invalid: [(String, String)] = [
                (#"{"step_goal":"many"}"#, "INVALID_VALUE"),
                (#"{"step_goal":5}"#, "INVALID_VALUE"),
                (#"{"colour":"red"}"#, "INVALID_VALUE"),
                (#"{"idle_alert":{"start":"25:00"}}"#, "INVALID_VALUE"),
                (#"{"alarms":[{"id":12,"enabled":true,"category":"wake_up","days":["mon"],"time":"07:00","active":true,"text":""}]}"#, "INVALID_VALUE"),
                (#"{"heart_rate_warning":{"enabled":true,"max_bpm":90,"min_bpm":100}}"#, "INVALID_VALUE"),
                (#"{"language":"klingon","step_goal":9000}"#, "INVALID_VALUE"),
            ]
            for (index, (payload, code)) in invalid.enumerated() {
                let body = String(payload.dropLast()) + #","transaction":"bad\#(index)"}"#
                try await stack.request("band/request/settings", body)
                let answer = await stack.response("band/response/settings", transaction: "bad\(index)")
                #expect(error(answer).code == code, "\(payload)")
            }
            try await stack.request("band/request/settings", "{not json")
            #expect(await eventually { stack.payloads("band/response/settings").contains { $0.contains("INVALID_PAYLOAD") } })
            #expect(try await inspect(stack)["settings_writes"] == writes)
            let settings = lastState(stack)?["settings"] as? [String: Any]
            #expect(settings?["step_goal"] as? Int == 8000)

            // An empty request reads everything back from the band.
            try await stack.request("band/request/settings", #"{"transaction":"read"}"#)
            let read = await stack.response("band/response/settings", transaction: "read")
            let all = (read?["data"] as? [String: Any])?["settings"] as? [String: Any]
            #expect(all?.count == 16)
        }
    }

    @Test func findPhoneArrivesAndDestructiveCommandsNeedAllow() async throws {
        try await Stack.with(scenarioDevices: Self.scenario(), configuredDevices: Self.configuredDevices) { stack in
            try await pair(stack)
            try await stack.control.raiseEvent(Self.band, .findMyPhone)
            #expect(await eventually { stack.payloads("band/event").compactMap(stack.json).contains { $0["event"] as? String == "find_phone" } })
            try await stack.request("band/request/find", #"{"vibrations":11,"transaction":"f"}"#)
            #expect(error(await stack.response("band/response/find", transaction: "f")).code == "INVALID_VALUE")
            for command in ["clear_data", "factory_reset"] {
                try await stack.request("band/request/\(command)", #"{"transaction":"x"}"#)
                #expect(error(await stack.response("band/response/\(command)", transaction: "x")).code == "FORBIDDEN")
            }
            #expect(try await inspect(stack)["paired"] == "true")
        }
        try await Stack.with(scenarioDevices: Self.scenario(), configuredDevices: Self.configuredDevices,
                             gatewayExtra: "allow:\n  clear_data: true\n  factory_reset: true") { stack in
            try await pair(stack)
            try await stack.request("band/request/clear_data", #"{"transaction":"c"}"#)
            #expect(await stack.response("band/response/clear_data", transaction: "c")?["status"] as? String == "ok")
            #expect(try await inspect(stack)["history_records"] == "0")
            try await stack.request("band/request/factory_reset", #"{"transaction":"r"}"#)
            #expect(await stack.response("band/response/factory_reset", transaction: "r")?["status"] as? String == "ok")
            #expect(await eventually(timeout: .seconds(30)) { lastState(stack)?["pairing"] as? String == "required" })
            #expect(try await inspect(stack)["paired"] == "false")
        }
    }
}
