import BlueZ
import Foundation
import EventLoop
import Gateway
import SimulatedWearables
import Testing
import Wear2MQTTTesting
import Wearables

/// A GoFIT band whose link is on demand (`link: on_demand`), on a clock the test moves: it is connected for a visit
/// and let go when the link has been quiet, synced at each periodic visit, brought back by a command, and reported
/// unreachable (offline) when a visit cannot reach it — while between visits it stays available.
@Suite("Gateway in memory: a link on demand")
struct OnDemandLinkGatewayTests {
    static let band = "C0:F1:70:00:00:01"
    static let address = BluetoothAddress(band)!

    static func started(_ clock: ManualClock, options: [String: SimulationOptionValue] = [:]) async throws -> GatewayHarness {
        let gateway = try GatewayHarness(configuration: """
        devices:
          - address: "\(band)"
            name: band
            options: {link: on_demand, sync_every_s: 600}
        """, time: clock.timeSource)
        try gateway.addDevice("gofit_care_xc", address: band, options: options)
        await gateway.start()
        return gateway
    }

    static func linkState(_ gateway: GatewayHarness) -> String? { gateway.last("band")?["link"]?["state"]?.text }
    static func connection(_ gateway: GatewayHarness) -> String? { gateway.last("band")?["connection"]?.text }
    static func available(_ gateway: GatewayHarness) -> String? { gateway.last("band/availability")?["state"]?.text }

    /// Moves the clock a second at a time until the band is let go (at most `limit` on).
    static func letGo(_ gateway: GatewayHarness, _ clock: ManualClock, limit: Duration = .seconds(60)) async -> Bool {
        await clock.step(by: .seconds(1), until: { connection(gateway) == "disconnected" && linkState(gateway) == "idle" },
                         limit: limit)
    }

    @Test("paired over a visit, let go when quiet, synced at each periodic visit, available in between")
    func visitsSyncAndLetGo() async throws {
        let clock = ManualClock()
        try await withStopping(Self.started(clock, options: ["history_days": .int(1)])) { gateway in
            // The first visit is at once: the band is unpaired, so its sync fails and pairing is asked for.
            #expect(await gateway.until { gateway.last("band")?["pairing"]?.text == "required" })
            #expect(Self.connection(gateway) == "connected")
            #expect(await gateway.request("bridge/request/device/pair", #"{"id":"band"}"#)?["status"]?.text == "ok")
            // The code on the band keeps the link while the wearer reads it.
            let shown = clock.now
            #expect(await clock.step(by: .seconds(5), until: { false }, limit: .seconds(60)) == false)
            #expect(Self.connection(gateway) == "connected", "let go while a code was on the band")
            let code = try #require(await gateway.central.inspect(Self.address)["pairing_code"])
            let confirmed = await gateway.request("bridge/request/device/pair/confirm", #"{"id":"band","code":"\#(code)"}"#)
            #expect(confirmed?["status"]?.text == "ok", "\(String(describing: confirmed))")

            #expect(await Self.letGo(gateway, clock))
            #expect(clock.now - shown >= .seconds(60))
            #expect(Self.available(gateway) == "online", "let go on purpose: still available")
            #expect(gateway.central.connectionCount(Self.address) == 1)
            let held = Int(await gateway.central.inspect(Self.address)["history_records"] ?? "") ?? 0
            #expect(held > 50)

            // Nothing until the periodic visit, 600 s after the first; that one syncs and lets go again.
            #expect(await clock.step(by: .seconds(10), until: { gateway.central.connectionCount(Self.address) == 2 },
                                     limit: .seconds(600)))
            #expect(await clock.step(by: .seconds(1), until: { gateway.last("band")?["sync"]?["state"]?.text == "idle" }))
            let records = gateway.sink.durableMessages.filter { $0.topic.hasPrefix("test/band/fitness/") }
            #expect(records.count == held)
            #expect(await Self.letGo(gateway, clock))
            #expect(Self.available(gateway) == "online")
            let nextVisit = try #require(gateway.last("band")?["link"]?["next_visit_ts"]?.integer)
            #expect(nextVisit >= clock.unixMilliseconds + 500_000, "the next visit an interval after this one")
        }
    }

    @Test("a command while let go brings the link back and runs; one the band is away for is refused and it goes offline")
    func commandsBringTheLinkBack() async throws {
        let clock = ManualClock()
        try await withStopping(Self.started(clock)) { gateway in
            #expect(await gateway.until { gateway.last("band")?["pairing"]?.text == "required" })
            #expect(await Self.letGo(gateway, clock))
            let visits = gateway.central.connectionCount(Self.address)

            let refreshed = await gateway.request("band/request/refresh")
            #expect(refreshed?["status"]?.text == "ok", "\(String(describing: refreshed))")
            #expect(gateway.central.connectionCount(Self.address) == visits + 1)
            #expect(await Self.letGo(gateway, clock))

            // Away: the visit the command asks for fails; the command says so and the band is offline.
            await gateway.central.setInRange(Self.address, false)
            let away = await gateway.request("band/request/refresh")
            #expect(away?["error"]?["code"]?.text == "DEVICE_DISCONNECTED", "\(String(describing: away))")
            #expect(Self.linkState(gateway) == "unreachable")
            #expect(Self.available(gateway) == "offline")
            // Bad requests are refused without a visit.
            let before = gateway.central.connectionCount(Self.address)
            #expect(await gateway.request("band/request/find", "{not json")?["error"]?["code"]?.text == "INVALID_PAYLOAD")
            #expect(gateway.central.connectionCount(Self.address) == before)

            // Back in range: `connect` asks for a visit now.
            await gateway.central.setInRange(Self.address, true)
            #expect(await gateway.request("band/request/connect")?["status"]?.text == "ok")
            #expect(await clock.step(by: .seconds(1), until: { Self.connection(gateway) == "connected" }))
            #expect(Self.available(gateway) == "online")
            #expect(await Self.letGo(gateway, clock))
        }
    }

    @Test("auto on a local adapter holds the link as before: no link state, no sync by itself")
    func heldLinks() async throws {
        let clock = ManualClock()
        let gateway = try GatewayHarness(configuration: """
        devices:
          - address: "\(Self.band)"
            name: band
        """, time: clock.timeSource)
        // Paired already (its key where device/pair leaves it), so a sync by itself would run and show.
        let folder = gateway.stateDirectory.path + "/drivers/c0f170000001"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try Data(#"{"key":"000102030405060708090a0b0c0d0e0f"}"#.utf8).write(to: URL(fileURLWithPath: folder + "/credentials.json"))
        try gateway.addDevice("gofit_care_xc", address: Self.band, options: ["paired": .bool(true)])
        await gateway.start()
        await withStopping(gateway) { gateway in
            #expect(await gateway.until { gateway.last("band")?["pairing"]?.text == "paired" })
            #expect(await clock.step(by: .seconds(5), until: { Self.connection(gateway) != "connected" }, limit: .seconds(120)) == false)
            #expect(gateway.central.connectionCount(Self.address) == 1)
            #expect(gateway.last("band")?["link"] == nil)
            // Nor does it sync by itself: syncing a held link is the user's (a `sync` request), as with `always`.
            #expect(gateway.all("band").allSatisfy { $0["sync"] == nil })
        }
    }
}
