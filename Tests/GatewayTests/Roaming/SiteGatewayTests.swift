import BlueZ
import Gateway
import MQTT
import Testing
import Wear2MQTTTesting
import Wearables

/// Three gateways in memory on one broker (`InMemorySite`), each with its own central hosting the same simulated
/// strap: who connects it, how it moves when the wearer walks, what a killed owner leaves behind, and that every
/// request is answered once by the site. The signal levels are fed to each gateway before each report, as BlueZ would
/// report them; the site's time is a manual clock the tests move a report at a time (`run(until:)`), so the short
/// settings (reports every 0.25 s, 1 s of hysteresis, 6 s to count a gateway gone) are the site's own however
/// loaded the machine is. The strap streams on the system's clock: its samples are waited for with `until`.
@Suite("Roaming: three gateways on one broker, in memory")
struct SiteGatewayTests {
    static let strap = "C0:FF:EE:00:00:01"
    /// The site's short settings, shared by every in-memory site test.
    static let roaming = """
    roaming:
      enabled: true
      report_interval_s: 0.25
      hysteresis_s: 1
      lost_after_s: 6
      release_timeout_s: 1
    """
    static let configuration = """
    devices:
      - address: "\(strap)"
        driver: standard
        name: strap
    \(roaming)
    """

    /// Three gateways hosting the strap, each hearing it at its level of `levels`.
    func started(_ levels: [String: Int]) async throws -> InMemorySite {
        let site = try InMemorySite(ids: ["a", "b", "c"], configuration: Self.configuration)
        for gateway in site.gateways.values { try gateway.addDevice("heart_rate_strap", address: Self.strap) }
        site.setLevels(of: "strap", levels)
        for id in ["a", "b", "c"] { await site.start(id) }
        return site
    }

    func owner(_ site: InMemorySite) -> SiteAssignment? {
        site.retained("test/bridge/site/owners/strap").flatMap { try? SiteMessages.assignment($0.payload).assignment }
    }

    func presence(_ site: InMemorySite) -> String? {
        site.retained("test/strap/presence").flatMap { GatewayHarness.object($0.payload) }?["gateway"]?.text
    }

    func connections(_ site: InMemorySite, _ id: String) -> Int {
        site.gateways[id]?.central.connectionCount(BluetoothAddress(Self.strap)!) ?? -1
    }

    @Test func theStrongestGatewayConnectsTheStrapAndItMovesWhenTheWearerWalks() async throws {
        try await withStopping(started(["a": -55, "b": -80, "c": -85])) { site in
            #expect(await site.run(until: { owner(site)?.gateway == "a" && presence(site) == "a" }))
            #expect(await site.until { site.messages(on: "test/strap/sensor/heart_rate").contains { $0.from == "a" } })
            #expect(connections(site, "b") == 0 && connections(site, "c") == 0)

            site.setLevels(of: "strap", ["a": -85, "b": -55, "c": -85])
            #expect(await site.run(until: { owner(site)?.gateway == "b" && presence(site) == "b" }))
            let moved = try #require(owner(site))
            #expect(moved.reason == .stronger && moved.epoch == 2 && moved.referee == "a")
            let handoff = try #require(site.retained("test/bridge/site/handoff/strap").map { try SiteMessages.handoff($0.payload) })
            #expect(handoff.epoch == 2 && handoff.from == "a")
            #expect(await site.until { site.messages(on: "test/strap/sensor/heart_rate").contains { $0.from == "b" } })
            #expect(connections(site, "c") == 0)
            // Never two at once: a's last sample comes before b's first, in the broker's order.
            let samples = site.messages(on: "test/strap/sensor/heart_rate").map(\.from)
            let lastOfA = try #require(samples.lastIndex(of: "a")), firstOfB = try #require(samples.firstIndex(of: "b"))
            #expect(lastOfA < firstOfB, "samples by publisher: \(samples)")
            // One handover: the strap did not come back.
            #expect(site.messages(on: "test/bridge/site/owners/strap").count == 2)
        }
    }

    @Test func everyRequestIsAnsweredOnceWhileTheDeviceMoves() async throws {
        try await withStopping(started(["a": -55, "b": -80, "c": -85])) { site in
            #expect(await site.run(until: { owner(site)?.gateway == "a" && presence(site) == "a" }))
            site.setLevels(of: "strap", ["a": -85, "b": -55, "c": -85])
            // Two requests every 50 ms of the site's time, all through the handover, and at least 40 of each.
            var sent = 0
            while owner(site)?.gateway != "b" || presence(site) != "b" || sent < 40 {
                site.publish(OutgoingMessage(topic: "test/strap/request/refresh", text: "{\"transaction\":\"r\(sent)\"}"))
                site.publish(OutgoingMessage(topic: "test/bridge/request/health_check", text: "{\"transaction\":\"h\(sent)\"}"))
                sent += 1
                #expect(await site.advance(by: .milliseconds(50)))
                if sent > 600 { break }
            }
            // Every request let through has been answered: no answer can come after this.
            #expect(await site.settled())
            func transactions(_ topic: String) -> [String] {
                site.messages(on: topic).compactMap { GatewayHarness.object($0.message.payload)?["transaction"]?.text }
            }
            for (topic, prefix) in [("test/strap/response/refresh", "r"), ("test/bridge/response/health_check", "h")] {
                let answered = transactions(topic)
                #expect(answered.count == sent, "\(topic): \(answered.count) answers to \(sent) requests")
                #expect(Set(answered) == Set((0..<sent).map { "\(prefix)\($0)" }), "\(topic)")
            }
            #expect(Set(site.messages(on: "test/strap/response/refresh").map(\.from)).isSubset(of: ["a", "b"]))
            #expect(Set(site.messages(on: "test/bridge/response/health_check").map(\.from)) == ["a"])
        }
    }

    /// `device/add` and `remove` go to the referee; the registry carries them to every gateway, and the new device is
    /// assigned like any other.
    @Test func aDeviceAddedOnTheRefereeIsManagedByEveryGatewayAndRemovedFromEvery() async throws {
        try await withStopping(started(["a": -55, "b": -80, "c": -85])) { site in
            let tag = "C0:FF:EE:00:00:07"
            for gateway in site.gateways.values { try gateway.addDevice("key_finder", address: tag) }
            #expect(await site.run(until: { owner(site)?.gateway == "a" }))
            site.publish(OutgoingMessage(topic: "test/bridge/request/device/add",
                                         text: #"{"address":"\#(tag)","driver":"standard","name":"tag","transaction":"add"}"#))
            #expect(await site.run(until: {
                site.messages(on: "test/bridge/response/device/add").count == 1 && site.retained("test/bridge/site/registry/tag") != nil
            }))
            func manages(_ id: String) async -> Bool {
                await site.gateways[id]?.core.manager?.managedDevices.contains { $0.id == "tag" } == true
            }
            for id in ["a", "b", "c"] {
                #expect(await site.run(until: { await manages(id) }), "gateway \(id) manages the tag")
            }
            // Nobody reports hearing the tag here (the levels are the strap's only): it stays unassigned, and the
            // referee answers its requests.
            site.publish(OutgoingMessage(topic: "test/bridge/request/device/remove", text: #"{"id":"tag","transaction":"rm"}"#))
            #expect(await site.run(until: { site.retained("test/bridge/site/registry/tag") == nil }))
            for id in ["a", "b", "c"] {
                #expect(await site.run(until: { await !manages(id) }), "gateway \(id) forgot the tag")
            }
            #expect(site.messages(on: "test/bridge/response/device/remove").map(\.from) == ["a"])
            #expect(await site.gateways["b"]?.core.manager?.managedDevices.map(\.id) == ["strap"])
        }
    }

    /// An epoch download interrupted by a handover: the old owner stops at its last stored page and hands over the
    /// Link's cursor with the download still pending; the new owner resumes it by itself. Every epoch arrives; the
    /// figure says how many arrived twice (same id).
    @Test func anEpochDownloadInterruptedByAHandoverResumesOnTheNewOwner() async throws {
        let link = "C0:A6:00:00:00:01"
        let epochEnd: Int64 = 1_795_046_400
        let site = try InMemorySite(ids: ["a", "b", "c"], configuration: """
        devices:
          - address: "\(link)"
            driver: actigraph
            name: link
        \(SiteGatewayTests.roaming)
        """)
        for gateway in site.gateways.values {
            try gateway.addDevice("actigraph_link", address: link, options: ["epoch_end": .int(Int(epochEnd))])
        }
        site.setLevels(of: "link", ["a": -55, "b": -80, "c": -85])
        for id in ["a", "b", "c"] { await site.start(id) }
        await withStopping(site) { site in
            #expect(await site.run(until: { site.gateways["a"]?.core.site?.heldDevices == ["link"] }))
            #expect(await site.until {
                site.retained("test/link").flatMap { GatewayHarness.object($0.payload) }?["connection"]?.text == "connected"
            })
            // Slow pages (on the device's clock), so the walk lands in the middle of the download.
            site.gateways["a"]?.central.setLatency(BluetoothAddress(link)!, .milliseconds(250))
            site.publish(OutgoingMessage(topic: "test/link/request/sync",
                                         text: #"{"startDateTime":"11-18-2026 16:00:00","stopDateTime":"11-18-2026 23:59:59","transaction":"s"}"#))
            #expect(await site.until { site.messages(on: "test/link/fitness/epoch").count > 20 })
            // From the walk on, a's pages come slower still: on a loaded machine the handover's real time (the
            // site's reports and their work) must not outlast the rest of the download, or a finishes it alone.
            // A page in flight ends within 2 s, so a's release is not held up for long.
            site.gateways["a"]?.central.setLatency(BluetoothAddress(link)!, .seconds(2))
            site.setLevels(of: "link", ["a": -85, "b": -55, "c": -85])
            #expect(await site.run(until: { site.gateways["b"]?.core.site?.heldDevices == ["link"] }))
            func ids() -> [String] { site.messages(on: "test/link/fitness/epoch").compactMap { GatewayHarness.object($0.message.payload)?["id"]?.text } }
            #expect(await site.until(timeout: .seconds(90)) { Set(ids()).count >= 480 }, "\(Set(ids()).count) of 480 epochs")
            let publishers = Set(site.messages(on: "test/link/fitness/epoch").map(\.from))
            let all = ids()
            print("figure: epoch download across a handover: \(Set(all).count) epochs, \(all.count - Set(all).count) published twice, by \(publishers.sorted())")
            #expect(Set(all).count == 480)
            #expect(publishers == ["a", "b"], "the download was not interrupted by the walk")
        }
    }

    @Test func aKilledOwnerLosesItsDeviceToTheNextBestAndAKilledRefereeToTheNextID() async throws {
        try await withStopping(started(["a": -80, "b": -55, "c": -70])) { site in
            #expect(await site.run(until: { owner(site)?.gateway == "b" && presence(site) == "b" }))
            site.kill("b")
            site.setLevels(of: "strap", ["a": -80, "c": -70])
            #expect(await site.run(until: { owner(site)?.gateway == "c" && presence(site) == "c" }))
            #expect(owner(site)?.reason == .ownerGone)
            // The referee dies too: c, alone, referees and keeps the strap through a second of reports.
            site.kill("a")
            site.setLevels(of: "strap", ["c": -70])
            #expect(await site.advance(by: .seconds(1)))
            #expect(owner(site)?.gateway == "c")
            #expect(site.gateways["c"]?.core.site?.isReferee == true)
        }
    }
}
