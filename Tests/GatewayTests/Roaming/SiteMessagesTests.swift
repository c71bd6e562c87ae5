import Gateway
import Testing
import Wearables

@Suite("Roaming: site topics and messages")
struct SiteMessagesTests {
    let topics = SiteTopics(base: "home/wear")

    @Test func everySiteTopicIsUnderTheBridgeAndClassifiesBack() {
        #expect(topics.gateway("kitchen") == "home/wear/bridge/site/gateways/kitchen")
        #expect(topics.classify(topics.gateway("kitchen")) == .gateway("kitchen"))
        #expect(topics.classify(topics.sightings("hall")) == .sightings("hall"))
        #expect(topics.classify(topics.owner("band")) == .owner("band"))
        #expect(topics.classify(topics.handoff("band")) == .handoff("band"))
        #expect(topics.classify(topics.registry("band")) == .registry("band"))
        #expect(topics.classify(topics.devices("hall")) == .devices("hall"))
        #expect(topics.subscriptions.count == 6)
    }

    @Test func topicsThatAreNotExactlyASiteRecordAreNotOurs() {
        for topic in ["home/wear/bridge/site/owners/", "home/wear/bridge/site/owners/band/x", "home/wear/bridge/site/other/band",
                      "home/wear/bridge/site/owners", "home/wear/band/owners/x", "elsewhere/bridge/site/owners/band",
                      "home/wear/bridge/site//band"] {
            #expect(topics.classify(topic) == nil, "\(topic)")
        }
    }

    @Test func anAssignmentRoundTripsWithSortedKeys() throws {
        let assignment = SiteAssignment(gateway: "hall", epoch: 12, referee: "hall", reason: .ownerGone)
        let bytes = SiteMessages.encode(assignment, sinceMilliseconds: 1_764_150_000_000)
        #expect(String(decoding: bytes, as: UTF8.self)
                == #"{"epoch":12,"gateway":"hall","reason":"owner_gone","referee":"hall","since":1764150000000}"#)
        let read = try SiteMessages.assignment(bytes)
        #expect(read.assignment == assignment)
        #expect(read.sinceMilliseconds == 1_764_150_000_000)
    }

    @Test func aSightingReportRoundTripsAndTakesItsGatewayFromTheTopic() throws {
        let report = SightingReport(gateway: "kitchen", devices: [
            "band": .init(rssi: -61.5, heard: 4), "strap": .init(rssi: -70, heard: 0, connected: true, lost: false),
        ])
        let bytes = SiteMessages.encode(report, atMilliseconds: 5)
        let read = try SiteMessages.sightingReport(bytes, gateway: "kitchen")
        #expect(read.report == report)
        #expect(read.atMilliseconds == 5)
        #expect(try SiteMessages.sightingReport(bytes, gateway: "hall").report.gateway == "hall")
    }

    @Test func aGatewayRecordAndAHandoffRoundTrip() throws {
        let record = SiteMessages.GatewayRecord(room: "kitchen", startedMilliseconds: 7, version: "0.9.0")
        #expect(try SiteMessages.gatewayRecord(SiteMessages.encode(record)) == record)
        let roomless = SiteMessages.GatewayRecord(room: nil, startedMilliseconds: 0, version: "0.9.0")
        #expect(try SiteMessages.gatewayRecord(SiteMessages.encode(roomless)) == roomless)
        let handoff = SiteMessages.Handoff(epoch: 3, from: "kitchen", releasedMilliseconds: 9, storage: [
            "sync": ["cursor": .integer(4711), "day": .text("2026-11-26")], "settings": ["goal": .integer(8000)],
        ])
        #expect(try SiteMessages.handoff(SiteMessages.encode(handoff)) == handoff)
    }

    @Test func malformedAssignmentsAreRefusedWithTheField() {
        let cases: [(String, String)] = [
            ("", "payload"), ("[]", "payload"), ("{", "payload"),
            (#"{"gateway":"a","epoch":1,"referee":"a","since":0}"#, "reason"),
            (#"{"gateway":"a","epoch":1,"referee":"a","reason":"whim","since":0}"#, "reason"),
            (#"{"gateway":"","epoch":1,"referee":"a","reason":"stronger","since":0}"#, "gateway"),
            (#"{"gateway":"a","epoch":0,"referee":"a","reason":"stronger","since":0}"#, "epoch"),
            (#"{"gateway":"a","epoch":-3,"referee":"a","reason":"stronger","since":0}"#, "epoch"),
            (#"{"gateway":"a","epoch":"1","referee":"a","reason":"stronger","since":0}"#, "epoch"),
            (#"{"gateway":"a","epoch":1.5,"referee":"a","reason":"stronger","since":0}"#, "epoch"),
            (#"{"gateway":7,"epoch":1,"referee":"a","reason":"stronger","since":0}"#, "gateway"),
            (#"{"gateway":"a","epoch":1,"referee":"a","reason":"stronger"}"#, "since"),
        ]
        for (payload, field) in cases {
            #expect(throws: SiteMessageError.self, "\(payload)") { try SiteMessages.assignment(Array(payload.utf8)) }
            do { _ = try SiteMessages.assignment(Array(payload.utf8)) } catch { #expect(error.field == field, "\(payload): \(error)") }
        }
    }

    @Test func malformedSightingsAreRefusedWithTheField() {
        let cases: [(String, String)] = [
            (#"{"at":1}"#, "devices"),
            (#"{"at":1,"devices":[]}"#, "devices"),
            (#"{"at":1,"devices":{"band":-60}}"#, "devices.band"),
            (#"{"at":1,"devices":{"band":{"rssi":"-60","heard":1,"connected":false,"lost":false}}}"#, "devices.band.rssi"),
            (#"{"at":1,"devices":{"band":{"rssi":-600,"heard":1,"connected":false,"lost":false}}}"#, "devices.band.rssi"),
            (#"{"at":1,"devices":{"band":{"rssi":-60,"heard":-1,"connected":false,"lost":false}}}"#, "devices.band.heard"),
            (#"{"at":1,"devices":{"band":{"rssi":-60,"heard":1,"connected":0,"lost":false}}}"#, "devices.band.connected"),
            (#"{"at":1,"devices":{"band":{"rssi":-60,"heard":1,"connected":false}}}"#, "devices.band.lost"),
            (#"{"devices":{}}"#, "at"),
        ]
        for (payload, field) in cases {
            do {
                _ = try SiteMessages.sightingReport(Array(payload.utf8), gateway: "a")
                Issue.record("accepted \(payload)")
            } catch { #expect(error.field == field, "\(payload): \(error)") }
        }
    }

    @Test func malformedHandoffsAndRecordsAreRefused() {
        for payload in [#"{"epoch":1,"from":"a","released":0}"#, #"{"epoch":1,"from":"a","released":0,"storage":{"sync":1}}"#,
                        #"{"epoch":1,"from":"","released":0,"storage":{}}"#] {
            #expect(throws: SiteMessageError.self, "\(payload)") { try SiteMessages.handoff(Array(payload.utf8)) }
        }
        for payload in [#"{"started":0}"#, #"{"started":-1,"version":"1"}"#, #"{"room":3,"started":0,"version":"1"}"#] {
            #expect(throws: SiteMessageError.self, "\(payload)") { try SiteMessages.gatewayRecord(Array(payload.utf8)) }
        }
    }

    /// A gateway's entries read back as it wrote them, named by the topic's gateway whatever the payload says.
    @Test func deviceEntriesRoundTripAndTakeTheirGatewayFromTheTopic() throws {
        let entry = BridgeDeviceEntry(id: "band", name: "Band", vendor: "GoFIT", model: "B1", address: "C0:FF:EE:00:00:01",
                                      driver: "gofit", capabilities: ["find", "heart_rate"], paired: true, connected: true,
                                      gateway: "elsewhere")
        let read = try SiteMessages.deviceEntries(SiteMessages.encode([entry]), gateway: "hall")
        var expected = entry
        expected.gateway = "hall"
        #expect(read == [expected])
        #expect(try SiteMessages.deviceEntries(Array("[]".utf8), gateway: "hall").isEmpty)
        for payload in [#"{}"#, #"[1]"#, #"[{"id":"band"}]"#,
                        #"[{"id":"bad id","address":"x","driver":"d","capabilities":[],"paired":false,"connected":false}]"#,
                        #"[{"id":"band","address":"x","driver":"d","capabilities":[3],"paired":false,"connected":false}]"#,
                        #"[{"id":"band","address":"x","driver":"d","capabilities":[],"paired":"no","connected":false}]"#] {
            #expect(throws: SiteMessageError.self, "\(payload)") { try SiteMessages.deviceEntries(Array(payload.utf8), gateway: "a") }
        }
    }

    /// Every truncation of every valid message is refused, never half read.
    @Test func everyTruncationIsRefused() {
        let messages: [(String, ([UInt8]) throws -> Void)] = [
            ("assignment", { _ = try SiteMessages.assignment($0) }),
            ("sightings", { _ = try SiteMessages.sightingReport($0, gateway: "a") }),
            ("record", { _ = try SiteMessages.gatewayRecord($0) }),
            ("handoff", { _ = try SiteMessages.handoff($0) }),
            ("devices", { _ = try SiteMessages.deviceEntries($0, gateway: "a") }),
        ]
        let valid: [[UInt8]] = [
            SiteMessages.encode(SiteAssignment(gateway: "b", epoch: 2, referee: "a", reason: .stronger), sinceMilliseconds: 1),
            SiteMessages.encode(SightingReport(gateway: "a", devices: ["band": .init(rssi: -60)]), atMilliseconds: 1),
            SiteMessages.encode(SiteMessages.GatewayRecord(room: "x", startedMilliseconds: 1, version: "1")),
            SiteMessages.encode(SiteMessages.Handoff(epoch: 1, from: "a", releasedMilliseconds: 1, storage: ["s": ["c": .integer(1)]])),
            SiteMessages.encode([BridgeDeviceEntry(id: "band", address: "C0:FF:EE:00:00:01", driver: "gofit")]),
        ]
        for ((name, read), bytes) in zip(messages, valid) {
            #expect(throws: Never.self, "\(name)") { try read(bytes) }
            for length in 0..<bytes.count {
                #expect(throws: SiteMessageError.self, "\(name) cut to \(length)") { try read(Array(bytes.prefix(length))) }
            }
        }
    }
}
