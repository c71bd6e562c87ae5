import BlueZ
import Gateway
import SimulatedWearables
import Testing
import Wear2MQTTTesting
import Wearables

/// A PineTime with InfiniTime through the whole gateway in memory: what connecting does (clock, state, streams),
/// every request the watch takes with its errors, the watch's buttons as events, and what an older release lacks.
/// The simulated watch records what it received (`inspect`), so each test checks the watch's side too.
@Suite("Gateway in memory: PineTime with InfiniTime")
struct InfiniTimeGatewayTests {
    static let watch = "C7:1E:00:00:00:01"
    static let address = BluetoothAddress(watch)!

    /// A gateway with one watch named `watch`, connected, on the given release and options.
    static func started(_ options: [String: SimulationOptionValue] = [:]) async throws -> GatewayHarness {
        let gateway = try GatewayHarness(configuration: """
        devices:
          - address: "\(watch)"
            name: watch
        """)
        try gateway.addDevice("pinetime_infinitime", address: watch, options: options)
        await gateway.start()
        #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("watch/availability")?["state"]?.text == "online" })
        // The firmware the driver read decides what a command may send (weather's sun times from 1.16): a request
        // before that read ended would be answered for an unknown release.
        #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("watch")?["firmware"] != nil })
        return gateway
    }

    static func code(_ response: [String: DeviceValue]?) -> String? { response?["error"]?["code"]?.text }
    static func message(_ response: [String: DeviceValue]?) -> String { response?["error"]?["message"]?.text ?? "" }

    func shown(_ gateway: GatewayHarness) async -> [String: String] { await gateway.central.inspect(Self.address) }

    @Test("connecting picks the infinitime driver, sets the clock and zone, and streams steps, motion and heart rate")
    func connectSetsTimeAndStreams() async throws {
        try await withStopping(Self.started()) { gateway in
            #expect(await gateway.until { gateway.last("watch")?["firmware"]?.text == "1.16.0" })
            #expect(gateway.last("watch")?["battery"]?.integer == 80)
            #expect(await gateway.until {
                gateway.sink.retained("test/bridge/devices").map { String(decoding: $0.payload, as: UTF8.self) }?
                    .contains(#""driver":"infinitime""#) == true
            })
            // Current Time first, then Local Time Information.
            #expect(await gateway.until { await shown(gateway)["time_zone_quarters"] != nil }, "Local Time Information written on connect")
            let watch = await shown(gateway)
            #expect(watch["time_writes"] == "1")
            #expect(watch["dst"] != "255", "never DST unknown")

            // Steps: the count read on connect, then counting up as the wearer walks.
            #expect(await gateway.until { gateway.all("watch/sensor/steps").count >= 2 })
            let steps = gateway.all("watch/sensor/steps").compactMap { $0["steps"]?.integer }
            #expect((1200...1210).contains(steps.first ?? 0), "read on connect: \(steps)")
            #expect(steps.last ?? 0 > steps.first ?? 0)
            // Motion in m/s²: a wrist's gravity, about 9.8 in magnitude, never raw counts.
            #expect(await gateway.until { gateway.all("watch/sensor/accelerometer").count >= 10 })
            for sample in gateway.all("watch/sensor/accelerometer").prefix(10) {
                let (x, y, z) = (sample["x"]?.number ?? 0, sample["y"]?.number ?? 0, sample["z"]?.number ?? 0)
                let magnitude = (x * x + y * y + z * z).squareRoot()
                #expect((5...16).contains(magnitude), "\(sample)")
            }
            #expect(await gateway.until { gateway.last("watch/sensor/heart_rate")?["bpm"]?.integer != nil })
            #expect(gateway.last("watch/sensor/heart_rate")?["rr_ms"] == nil, "InfiniTime sends no RR intervals")
        }
    }

    @Test("notify shows title and body on the wrist, fits long text, and refuses bad fields before writing")
    func notify() async throws {
        try await withStopping(Self.started()) { gateway in
            let doorbell = await gateway.request("watch/request/notify", #"{"title":"Doorbell","body":"Front door","category":"simple_alert"}"#)
            #expect(doorbell?["status"]?.text == "ok", "\(String(describing: doorbell))")
            #expect(doorbell?["data"]?["truncated"]?.flag == false)
            var watch = await shown(gateway)
            #expect(watch["notification_title"] == "Doorbell")
            #expect(watch["notification_body"] == "Front door")
            #expect(watch["notification_category"] == "simple_alert")

            // Longer than the watch's 99 bytes: cut between characters, and the answer says so.
            let long = String(repeating: "ding dong ", count: 30)
            let cut = await gateway.request("watch/request/notify", #"{"title":"Doorbell","body":"\#(long)"}"#)
            #expect(cut?["data"]?["truncated"]?.flag == true)
            watch = await shown(gateway)
            let body = watch["notification_body"] ?? ""
            #expect(body.hasSuffix("..."))
            #expect("Doorbell".utf8.count + 1 + body.utf8.count <= 99)
            #expect(watch["notifications"] == "2")

            let refused: [(String, String, String)] = [
                (#"{"title":"x","category":"telegram"}"#, "INVALID_VALUE", "category"),
                (#"{"title":5}"#, "INVALID_VALUE", "title"),
                (#"{"body":["a"]}"#, "INVALID_VALUE", "body"),
                (#"{"title":"x","colour":"red"}"#, "INVALID_VALUE", "colour"),
                (#"{}"#, "INVALID_VALUE", "title or body"),
                (#"{"title":"x","category":"all"}"#, "INVALID_VALUE", "category"),
                (#"{"title":"x""#, "INVALID_PAYLOAD", "not valid JSON"),
            ]
            for (body, code, field) in refused {
                let answer = await gateway.request("watch/request/notify", body)
                #expect(Self.code(answer) == code, "\(body): \(String(describing: answer))")
                #expect(Self.message(answer).contains(field), "\(body): \(Self.message(answer))")
            }
            #expect(await shown(gateway)["notifications"] == "2", "nothing refused reached the watch")
            #expect(Self.code(await gateway.request("nobody/request/notify", #"{"title":"x"}"#)) == "DEVICE_NOT_FOUND")
        }
    }

    @Test("a call notification opens the call screen; its buttons arrive as call events, the music app's as music events")
    func buttonsAreEvents() async throws {
        try await withStopping(Self.started()) { gateway in
            // The driver follows both buttons' characteristics once its connect work is done.
            for uuid in [InfiniTimeUUID.Characteristic.notificationEvent, InfiniTimeUUID.Characteristic.musicEvent] {
                #expect(await gateway.until { await gateway.central.isSubscribed(uuid, on: Self.address) })
            }
            // No call on the screen: the call buttons are not there to press.
            #expect(await gateway.central.trigger(.callAnswer, on: Self.address))
            #expect(await gateway.request("watch/request/notify", #"{"body":"Mary","category":"call"}"#)?["status"]?.text == "ok")
            #expect(await shown(gateway)["call_showing"] == "true")
            #expect(await gateway.central.trigger(.callReject, on: Self.address))
            #expect(await gateway.until { gateway.last("watch/event")?["event"]?.text == "call" })
            #expect(gateway.all("watch/event").filter { $0["event"]?.text == "call" }.map { $0["action"]?.text } == ["reject"])

            for (button, action) in [(DeviceEvent.musicPlay, "play"), (.musicNext, "next"), (.musicVolumeDown, "volume_down")] {
                #expect(await gateway.central.trigger(button, on: Self.address))
                #expect(await gateway.until { gateway.last("watch/event")?["action"]?.text == action }, "\(button)")
                #expect(gateway.last("watch/event")?["event"]?.text == "music")
            }
        }
    }

    @Test("music writes now playing to the watch; bad fields write nothing")
    func music() async throws {
        try await withStopping(Self.started()) { gateway in
            let album = String(repeating: "Abbey Road ", count: 5)
            let answer = await gateway.request("watch/request/music", """
                {"artist":"The Beatles","track":"Something","album":"\(album)","playing":true,"position_s":42,"length_s":182,"speed":1.5}
                """)
            #expect(answer?["status"]?.text == "ok", "\(String(describing: answer))")
            #expect(answer?["data"]?["truncated"] == ["album"])
            let watch = await shown(gateway)
            #expect(watch["music_artist"] == "The Beatles")
            #expect(watch["music_track"] == "Something")
            #expect(watch["music_playing"] == "true")
            #expect(watch["music_position_s"] == "42")
            #expect(watch["music_length_s"] == "182")
            #expect(watch["music_speed_percent"] == "150")
            #expect(watch["music_album"]?.hasSuffix("...") == true && (watch["music_album"]?.utf8.count ?? 99) <= 40)

            let writes = gateway.central.writes(to: Self.address).count
            for (body, field) in [(#"{"position_s":-1}"#, "position_s"), (#"{"playing":"yes"}"#, "playing"),
                                  (#"{"length_s":4294967296}"#, "length_s"), (#"{"speed":-2}"#, "speed"),
                                  (#"{"volume":3}"#, "volume"), (#"{}"#, "music needs")] {
                let refused = await gateway.request("watch/request/music", body)
                #expect(Self.code(refused) == "INVALID_VALUE", "\(body)")
                #expect(Self.message(refused).contains(field), "\(body): \(Self.message(refused))")
            }
            #expect(gateway.central.writes(to: Self.address).count == writes)
        }
    }

    @Test("weather on 1.16 carries sun times; on 1.14–1.15 it goes without; before 1.14 it is NOT_SUPPORTED")
    func weatherByRelease() async throws {
        let request = #"{"current":{"temperature":21.5,"min":15,"max":24,"location":"Paris","icon":"clouds","sunrise":"07:12","sunset":"19:45"},"forecast":[{"min":12,"max":20,"icon":"rain"},{"min":10,"max":18}]}"#
        try await withStopping(Self.started()) { current in
            let answer = await current.request("watch/request/weather", request)
            #expect(answer?["data"]?["sun_times_sent"]?.flag == true, "\(String(describing: answer))")
            var watch = await shown(current)
            #expect(watch["weather_location"] == "Paris")
            #expect(watch["weather_temperature"] == "21.5")
            #expect(watch["weather_icon"] == "clouds")
            #expect(watch["weather_sunrise"] == "432")
            #expect(watch["forecast_days"] == "2")
            #expect(watch["weather_ignored"] == "0")

            for (body, field) in [(#"{"current":{"temperature":"warm"}}"#, "current.temperature"),
                                  (#"{"current":{"temperature":400}}"#, "current.temperature"),
                                  (#"{"current":{"temperature":20,"icon":"sunny"}}"#, "current.icon"),
                                  (#"{"current":{"temperature":20,"sunrise":"07:12"}}"#, "sunset"),
                                  (#"{"current":{"temperature":20,"sunrise":"20:00","sunset":"07:00"}}"#, "sunrise"),
                                  (#"{"current":{"temperature":20,"sunrise":"7h"}}"#, "current.sunrise"),
                                  (#"{"forecast":[{"min":1,"max":2},{"min":1,"max":2},{"min":1,"max":2},{"min":1,"max":2},{"min":1,"max":2},{"min":1,"max":2}]}"#, "forecast"),
                                  (#"{"forecast":[{"max":2}]}"#, "forecast[0].min"), (#"{"now":{}}"#, "now"), (#"{}"#, "current")] {
                let refused = await current.request("watch/request/weather", body)
                #expect(Self.code(refused) == "INVALID_VALUE", "\(body): \(String(describing: refused))")
                #expect(Self.message(refused).contains(field), "\(body): \(Self.message(refused))")
            }

            try await withStopping(Self.started(["firmware": .string("1.15.0")])) { older in
                let withoutSun = await older.request("watch/request/weather", request)
                #expect(withoutSun?["data"]?["sun_times_sent"]?.flag == false, "\(String(describing: withoutSun))")
                watch = await shown(older)
                #expect(watch["weather_location"] == "Paris", "1.15 ignores version 1, so version 0 went: \(watch)")
                #expect(watch["weather_sunrise"] == "unknown")
                #expect(watch["weather_ignored"] == "0")

                try await withStopping(Self.started(["firmware": .string("1.13.0")])) { oldest in
                    let refused = await oldest.request("watch/request/weather", request)
                    #expect(Self.code(refused) == "NOT_SUPPORTED")
                    #expect(Self.message(refused).contains("1.14"), Comment(rawValue: Self.message(refused)))
                }
            }
        }
    }

    @Test("navigation, find and time_sync reach the watch; an old release without Local Time sets the clock alone")
    func navigationFindAndTime() async throws {
        try await withStopping(Self.started()) { gateway in
            let route = await gateway.request("watch/request/navigation", #"{"icon":"turn-left","narrative":"Rue de Rivoli","distance":"50 m","progress":40}"#)
            #expect(route?["status"]?.text == "ok", "\(String(describing: route))")
            var watch = await shown(gateway)
            #expect(watch["navigation_icon"] == "turn-left")
            #expect(watch["navigation_narrative"] == "Rue de Rivoli")
            #expect(watch["navigation_distance"] == "50 m")
            #expect(watch["navigation_progress"] == "40")
            for (body, field) in [(#"{"icon":"teleport"}"#, "icon"), (#"{"progress":101}"#, "progress"),
                                  (#"{"narrative":7}"#, "narrative"), (#"{}"#, "navigation needs")] {
                let refused = await gateway.request("watch/request/navigation", body)
                #expect(Self.code(refused) == "INVALID_VALUE", "\(body)")
                #expect(Self.message(refused).contains(field), "\(body): \(Self.message(refused))")
            }

            #expect(await gateway.request("watch/request/find")?["data"]?["level"]?.text == "high")
            #expect(await gateway.until { await shown(gateway)["alerts"] == "1" })
            #expect(Self.code(await gateway.request("watch/request/find", #"{"level":"loud"}"#)) == "INVALID_VALUE")

            let sync = await gateway.request("watch/request/time_sync")
            #expect(sync?["data"]?["time_zone"]?.flag == true, "\(String(describing: sync))")
            watch = await shown(gateway)
            #expect(await gateway.until { await shown(gateway)["time_writes"] == "2" }, "on connect and on request")
            #expect(Self.code(await gateway.request("watch/request/time_sync", #"{"zone":"UTC"}"#)) == "INVALID_VALUE")

            try await withStopping(Self.started(["firmware": .string("1.11.0")])) { old in
                let oldSync = await old.request("watch/request/time_sync")
                #expect(oldSync?["data"]?["time_zone"]?.flag == false, "\(String(describing: oldSync))")
                let oldWatch = await old.central.inspect(Self.address)
                #expect(oldWatch["time_zone_quarters"] == nil)
                #expect(await old.until { await old.central.inspect(Self.address)["time_writes"] == "2" })
            }
        }
    }

    @Test("a watch that refuses a write answers INTERNAL with its ATT code; one gone mid-command DEVICE_DISCONNECTED")
    func faults() async throws {
        try await withStopping(Self.started(["fail_writes": .string("notify")])) { gateway in
            let refused = await gateway.request("watch/request/notify", #"{"title":"Doorbell"}"#)
            #expect(Self.code(refused) == "INTERNAL", "\(String(describing: refused))")
            #expect(refused?["error"]?["vendor_code"]?.integer == 0x0E)
            #expect(await shown(gateway)["notifications"] == "0")
            // The rest of the watch still works.
            #expect(await gateway.request("watch/request/music", #"{"track":"Something"}"#)?["status"]?.text == "ok")

            // A write that cannot finish before the link drops, however loaded the machine (300 ms was not always).
            gateway.central.setLatency(Self.address, .seconds(20))
            let slow = Task { await gateway.request("watch/request/music", #"{"track":"Help!"}"#) }
            // The link drops while the write waits out its latency, or before it is sent: either way the watch is not
            // connected, and the answer is the same.
            await gateway.central.dropLink(Self.address)
            let gone = await slow.value
            #expect(Self.code(gone) == "DEVICE_DISCONNECTED", "\(String(describing: gone))")
            gateway.central.setLatency(Self.address, nil)
        }
    }
}
