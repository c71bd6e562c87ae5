import Testing

@testable import Gateway

/// MQTT 5 §4.7's wildcard rules, with the specification's own examples (sport/tennis/player1/#, sport/+, $SYS).
@Suite("Browser subscriptions: MQTT topic filters")
struct TopicFilterTests {
    @Test("the specification's examples of # and +", arguments: [
        ("sport/tennis/player1/#", "sport/tennis/player1", true),
        ("sport/tennis/player1/#", "sport/tennis/player1/ranking", true),
        ("sport/tennis/player1/#", "sport/tennis/player1/score/wimbledon", true),
        ("sport/#", "sport", true),
        ("#", "sport/tennis", true),
        ("sport/tennis/+", "sport/tennis/player1", true),
        ("sport/tennis/+", "sport/tennis/player1/ranking", false),
        ("sport/+", "sport", false),
        ("sport/+", "sport/", true),
        ("+/+", "/finance", true),
        ("/+", "/finance", true),
        ("+", "/finance", false),
        ("wear2mqtt/+", "wear2mqtt/band", true),
        ("wear2mqtt/+", "wear2mqtt/band/availability", false),
        ("wear2mqtt/+/sensor/#", "wear2mqtt/h10/sensor/ecg", true),
        ("wear2mqtt/band", "wear2mqtt/band", true),
        ("wear2mqtt/band", "wear2mqtt/bandx", false),
    ])
    func matching(filter: String, topic: String, matches: Bool) throws {
        #expect(try #require(TopicFilter(filter)).matches(topic) == matches)
    }

    @Test("a wildcard first level never matches a topic starting with $")
    func dollarTopics() throws {
        #expect(try #require(TopicFilter("#")).matches("$SYS/broker") == false)
        #expect(try #require(TopicFilter("+/monitor/Clients")).matches("$SYS/monitor/Clients") == false)
        #expect(try #require(TopicFilter("$SYS/#")).matches("$SYS/monitor/Clients"))
    }

    @Test("filters a broker refuses are refused", arguments: ["", "sport/tennis#", "sport/tennis/#/ranking", "sport+", "a/b+/c", "a\u{0}b",
                                                            String(repeating: "a", count: 1025)])
    func invalid(filter: String) {
        #expect(TopicFilter(filter) == nil)
    }
}
