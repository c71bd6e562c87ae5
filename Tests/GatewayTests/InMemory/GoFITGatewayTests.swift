import EventLoop
import BlueZ
import Gateway
import SimulatedWearables
import Synchronization
import Testing
import Wear2MQTTTesting
import Wearables

/// A GoFIT Care-Xc through the whole gateway in memory: the `gofit` driver pairs it with the code the band shows,
/// syncs its history across a dropped link, sets its settings and runs its commands. The end-to-end suite keeps
/// pairing and the key surviving a restart of the process.
@Suite("Gateway in memory: GoFIT Care-Xc", .timeLimit(.minutes(1)))
struct GoFITGatewayTests {
    static let band = "C0:F1:70:00:00:01"
    static let address = BluetoothAddress(band)!
    static let devices = """
    devices:
      - address: "\(band)"
        name: band
    """

    static func started(options: [String: SimulationOptionValue] = [:], extra: String = "",
                        time: TimeSource? = nil) async throws -> GatewayHarness {
        let gateway = try GatewayHarness(configuration: devices + "\n" + extra, time: time)
        try gateway.addDevice("gofit_care_xc", address: band, options: options)
        await gateway.start()
        return gateway
    }

    static func code(_ response: [String: DeviceValue]?) -> String? { response?["error"]?["code"]?.text }

    /// `device/pair`, then `device/pair/confirm` with the code the band shows.
    static func pair(_ gateway: GatewayHarness) async throws {
        #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("band")?["pairing"]?.text == "required" })
        #expect(await gateway.request("bridge/request/device/pair", #"{"id":"band"}"#)?["status"]?.text == "ok")
        let code = try #require(await gateway.central.inspect(address)["pairing_code"])
        let confirmed = await gateway.request("bridge/request/device/pair/confirm", #"{"id":"band","code":"\#(code)"}"#)
        #expect(confirmed?["status"]?.text == "ok", "\(String(describing: confirmed))")
        #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("band")?["settings"] != nil })
    }

    @Test("a lost response is asked for again with the same sequence number and not executed twice")
    func lostResponseIsAskedForAgain() async throws {
        // The driver's silence runs on the gateway's clock, moved here; the band keeps the machine's.
        let clock = ManualClock()
        try await withStopping(Self.started(options: ["lose_responses": .int(1)], time: clock.timeSource)) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("band")?["pairing"]?.text == "required" })
            // The band swallows its answer to PAIR_START; after 3 s of silence the gateway asks again and the band
            // answers from its cache: one code, shown once.
            let asked = clock.now
            let answer = Mutex<[String: DeviceValue]??>(nil)
            Task {
                let paired = await gateway.request("bridge/request/device/pair", #"{"id":"band"}"#)
                answer.withLock { $0 = .some(paired) }
            }
            #expect(await clock.step(by: .milliseconds(250)) { answer.withLock { $0 } != nil })
            #expect(answer.withLock { $0 }??["status"]?.text == "ok")
            #expect(clock.now - asked >= .seconds(3))
            let band = await gateway.central.inspect(Self.address)
            #expect(band["retransmissions_answered"] == "1")
            let code = try #require(band["pairing_code"])
            let confirmed = await gateway.request("bridge/request/device/pair/confirm", #"{"id":"band","code":"\#(code)"}"#)
            #expect(confirmed?["status"]?.text == "ok")
        }
    }

    @Test("a sync whose link drops half way resumes by itself and delivers every record exactly once, durably")
    func syncAcrossALinkDrop() async throws {
        try await withStopping(Self.started(options: ["history_days": .int(2), "drop_after_pages": .int(3)])) { gateway in
            try await Self.pair(gateway)
            let held = Int(await gateway.central.inspect(Self.address)["history_records"] ?? "") ?? 0
            #expect(held > 200)

            // The band drops the link after the third page: the request fails, the sync resumes on reconnect.
            #expect(Self.code(await gateway.request("band/request/sync")) == "DEVICE_DISCONNECTED")
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("band")?["sync"]?["state"]?.text == "idle" })
            let kinds = ["steps", "sleep", "heart_rate", "spo2", "activity"]
            func records() -> [[String: DeviceValue]] {
                gateway.sink.durableMessages.filter { message in kinds.contains { message.topic == "test/band/fitness/\($0)" } }
                    .compactMap { GatewayHarness.object($0.payload) }
            }
            #expect(await gateway.until(timeout: .seconds(60)) { records().count >= held })
            let ids = records().compactMap { $0["id"]?.text }
            #expect(ids.count == held)
            #expect(Set(ids).count == ids.count, "no record twice")
            let activity = try #require(gateway.all("band/fitness/activity").first)
            #expect((activity["gps"]?.list?.count ?? 0) > 100)
            #expect((activity["laps"]?.list?.count ?? 0) >= 1)

            // A second sync publishes nothing new.
            let second = try #require(await gateway.request("band/request/sync"))
            #expect(second["status"]?.text == "ok")
            #expect(kinds.allSatisfy { second["data"]?["records"]?[$0]?.integer == 0 })
            #expect(records().count == held)
        }
    }

    @Test("settings round-trip, and every kind of invalid value is refused with nothing written to the band")
    func settingsRoundTripAndInvalidValues() async throws {
        try await withStopping(Self.started()) { gateway in
            try await Self.pair(gateway)
            let applied = await gateway.request("band/request/settings",
                                                #"{"step_goal":8000,"time_format":"24","idle_alert":{"start":"09:30","days":["mon","fri"]}}"#)
            #expect(applied?["status"]?.text == "ok", "\(String(describing: applied))")
            #expect(await gateway.until {
                let settings = gateway.last("band")?["settings"]
                return settings?["step_goal"]?.integer == 8000 && settings?["idle_alert"]?["start"]?.text == "09:30"
                    && settings?["idle_alert"]?["days"]?.list?.compactMap(\.text) == ["mon", "fri"]
                    && settings?["idle_alert"]?["end"] != nil
            })
            let writes = await gateway.central.inspect(Self.address)["settings_writes"]

            let invalid: [(String, String)] = [
                (#"{"step_goal":"many"}"#, "INVALID_VALUE"),
                (#"{"step_goal":5}"#, "INVALID_VALUE"),
                (#"{"colour":"red"}"#, "INVALID_VALUE"),
                (#"{"idle_alert":{"start":"25:00"}}"#, "INVALID_VALUE"),
                (#"{"alarms":[{"id":12,"enabled":true,"category":"wake_up","days":["mon"],"time":"07:00","active":true,"text":""}]}"#, "INVALID_VALUE"),
                (#"{"heart_rate_warning":{"enabled":true,"max_bpm":90,"min_bpm":100}}"#, "INVALID_VALUE"),
                (#"{"language":"klingon","step_goal":9000}"#, "INVALID_VALUE"),
                ("{not json", "INVALID_PAYLOAD"),
            ]
            for (payload, code) in invalid {
                #expect(Self.code(await gateway.request("band/request/settings", payload)) == code, "\(payload)")
            }
            #expect(await gateway.central.inspect(Self.address)["settings_writes"] == writes)
            #expect(gateway.last("band")?["settings"]?["step_goal"]?.integer == 8000)

            // An empty request reads everything back from the band.
            let read = await gateway.request("band/request/settings")
            #expect(read?["data"]?["settings"]?.object?.count == 16)
        }
    }

    @Test("find_phone from the band arrives as an event; clear_data and factory_reset are FORBIDDEN unless allowed")
    func findPhoneAndDestructiveCommands() async throws {
        try await withStopping(Self.started()) { gateway in
            try await Self.pair(gateway)
            #expect(await gateway.central.trigger(.findMyPhone, on: Self.address))
            #expect(await gateway.until { gateway.all("band/event").contains { $0["event"]?.text == "find_phone" } })
            #expect(Self.code(await gateway.request("band/request/find", #"{"vibrations":11}"#)) == "INVALID_VALUE")
            for command in ["clear_data", "factory_reset"] {
                #expect(Self.code(await gateway.request("band/request/\(command)")) == "FORBIDDEN")
            }
            #expect(await gateway.central.inspect(Self.address)["paired"] == "true")
        }
    }

    @Test("allowed, clear_data empties the band's history and factory_reset unpairs it")
    func allowedDestructiveCommands() async throws {
        try await withStopping(Self.started(extra: "allow:\n  clear_data: true\n  factory_reset: true")) { gateway in
            try await Self.pair(gateway)
            #expect(await gateway.request("band/request/clear_data")?["status"]?.text == "ok")
            #expect(await gateway.central.inspect(Self.address)["history_records"] == "0")
            #expect(await gateway.request("band/request/factory_reset")?["status"]?.text == "ok")
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("band")?["pairing"]?.text == "required" })
            #expect(await gateway.central.inspect(Self.address)["paired"] == "false")
        }
    }
}
