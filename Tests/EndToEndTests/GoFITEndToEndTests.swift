import Foundation
import Simulator
import Testing
import Wear2MQTTTesting

/// A GoFIT Care-Xc over the whole product: the simulator serves the band (standard services plus our modeled
/// vendor service, docs/protocols/gofit.md) and the gateway's `gofit` driver pairs it with the code the band
/// shows, keeping the key across a restart of the process. Sync, settings and commands are tested in memory
/// (Tests/GatewayTests/InMemory/GoFITGatewayTests.swift).
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

    @Test func wrongCodeFailsRightCodePairsAndTheKeySurvivesARestart() async throws {
        try await Stack.with(scenarioDevices: Self.scenario(), configuredDevices: Self.configuredDevices) { stack in
            // Unpaired: the state says so and one pairing_required event tells the user what to do.
            #expect(await stack.until(timeout: .seconds(45)) { lastState(stack)?["pairing"] as? String == "required" })
            #expect(await stack.until { stack.payloads("band/event").compactMap(stack.json).contains { $0["event"] as? String == "pairing_required" } })
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
            #expect(await stack.until { lastState(stack)?["pairing"] as? String == "paired" })
            #expect(await stack.until { lastState(stack)?["mac"] != nil && lastState(stack)?["settings"] != nil })

            // The key is in the state directory, readable by the gateway's user only.
            let file = stack.broker.directory.file("state") + "/drivers/c0f170000001/credentials.json"
            let attributes = try FileManager.default.attributesOfItem(atPath: file)
            #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o077 } == 0)

            // A restart authenticates with the stored key: paired again, no new pairing_required event.
            let eventsBefore = stack.payloads("band/event").count
            let statesBefore = stack.payloads("band").count
            try await stack.restartGateway()
            // (The old gateway's last states, `disconnecting`, still say paired: wait for the new one's connection.)
            #expect(await stack.until(timeout: .seconds(45)) {
                stack.payloads("band").dropFirst(statesBefore).compactMap(stack.json).contains {
                    $0["pairing"] as? String == "paired" && $0["connection"] as? String == "connected"
                }
            })
            // The kept state says paired from the start; the band answers once the new session proved the key.
            let found = try await stack.requestWhenReady("band", "find", #""vibrations":3"#)
            #expect(found?["status"] as? String == "ok", "\(String(describing: found))")
            #expect(try await inspect(stack)["vibrations"] == "3")
            #expect(stack.payloads("band/event").count == eventsBefore)
        }
    }
}
