import MQTT
import Testing

@testable import Gateway

/// The pure rule behind retained requests (issue 38): refuse and clear, never run; the clearing's echo is no request.
@Suite("Retained requests")
struct RetainedRequestsTests {
    static func message(_ payload: String, retain: Bool, topic: String = "w/bridge/request/device/remove") -> IncomingMessage {
        IncomingMessage(topic: topic, payload: Array(payload.utf8), qos: .atLeastOnce, retain: retain, properties: MQTTProperties())
    }

    @Test("retained with a payload: refuse and clear; plain: handle; retained and empty: a deletion, ignored")
    func decisions() {
        var rule = RetainedRequests()
        let now = ContinuousClock.now
        #expect(rule.decide(Self.message("{}", retain: false), at: now) == .handle)
        #expect(rule.decide(Self.message("", retain: false), at: now) == .handle, "an empty plain request is {}")
        #expect(rule.decide(Self.message("", retain: true), at: now) == .ignore)
        let clear = OutgoingMessage(topic: "w/bridge/request/device/remove", payload: [], qos: .atLeastOnce, retain: true)
        #expect(rule.decide(Self.message("{\"id\":\"a\"}", retain: true), at: now) == .refuseAndClear(clear))
    }

    @Test("the plain empty echo of a clearing is ignored once, within the window; later an empty request is one again")
    func echo() {
        var rule = RetainedRequests()
        let now = ContinuousClock.now
        _ = rule.decide(Self.message("{}", retain: true), at: now)
        #expect(rule.decide(Self.message("", retain: false, topic: "w/other/get"), at: now) == .handle)
        #expect(rule.decide(Self.message("", retain: false), at: now + .seconds(1)) == .ignore)
        #expect(rule.decide(Self.message("", retain: false), at: now + .seconds(2)) == .handle, "only once")
        _ = rule.decide(Self.message("{}", retain: true), at: now)
        #expect(rule.decide(Self.message("", retain: false), at: now + .seconds(11)) == .handle, "after the window")
    }

    @Test("a storm of retained requests is remembered within a bound")
    func bounded() {
        var rule = RetainedRequests()
        let now = ContinuousClock.now
        for index in 0..<5_000 { _ = rule.decide(Self.message("{}", retain: true, topic: "w/d\(index)/get"), at: now) }
        #expect(rule.decide(Self.message("", retain: false, topic: "w/d4999/get"), at: now) == .ignore)
        #expect(rule.decide(Self.message("", retain: false, topic: "w/d0/get"), at: now) == .handle, "the oldest were let go")
    }
}
