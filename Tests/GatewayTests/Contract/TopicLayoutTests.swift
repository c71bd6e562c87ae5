import Testing
import Wearables

@testable import Gateway

@Suite("Topics of the contract")
struct TopicLayoutTests {
    let layout = TopicLayout(base: "wear2mqtt")

    @Test("bridge topics")
    func bridgeTopics() {
        #expect(layout.bridgeState == "wear2mqtt/bridge/state")
        #expect(layout.bridgeInfo == "wear2mqtt/bridge/info")
        #expect(layout.bridgeDevices == "wear2mqtt/bridge/devices")
        #expect(layout.bridgeEvent == "wear2mqtt/bridge/event")
        #expect(layout.bridgeHealth == "wear2mqtt/bridge/health")
        #expect(layout.bridgeRequest("device/pair/confirm") == "wear2mqtt/bridge/request/device/pair/confirm")
        #expect(layout.bridgeResponse("scan/stop") == "wear2mqtt/bridge/response/scan/stop")
    }

    @Test("device topics")
    func deviceTopics() {
        #expect(layout.device("strap") == "wear2mqtt/strap")
        #expect(layout.availability("strap") == "wear2mqtt/strap/availability")
        #expect(layout.sensor("strap", .heartRate) == "wear2mqtt/strap/sensor/heart_rate")
        #expect(layout.sensor("band", .gameRotation) == "wear2mqtt/band/sensor/game_rotation")
        #expect(layout.gesture("band") == "wear2mqtt/band/gesture")
        #expect(layout.event("tag") == "wear2mqtt/tag/event")
        #expect(layout.fitness("band", kind: "steps") == "wear2mqtt/band/fitness/steps")
        #expect(layout.deviceRequest("tag", command: "find") == "wear2mqtt/tag/request/find")
        #expect(layout.deviceResponse("tag", command: "find") == "wear2mqtt/tag/response/find")
        #expect(layout.deviceSet("band") == "wear2mqtt/band/set")
        #expect(layout.deviceGet("band") == "wear2mqtt/band/get")
        #expect(layout.requestSubscriptions == [
            "wear2mqtt/+/request/#", "wear2mqtt/+/set", "wear2mqtt/+/get",
        ])
    }

    @Test("incoming topics name bridge requests (with slashes) and device requests", arguments: [
        ("wear2mqtt/bridge/request/scan", IncomingTopic.bridgeRequest(name: "scan")),
        ("wear2mqtt/bridge/request/scan/stop", .bridgeRequest(name: "scan/stop")),
        ("wear2mqtt/bridge/request/device/add", .bridgeRequest(name: "device/add")),
        ("wear2mqtt/bridge/request/device/pair/confirm", .bridgeRequest(name: "device/pair/confirm")),
        ("wear2mqtt/bridge/request/", .bridgeRequest(name: "")),
        ("wear2mqtt/tag/request/find", .deviceRequest(device: "tag", command: "find")),
        ("wear2mqtt/tag/request/time_sync", .deviceRequest(device: "tag", command: "time_sync")),
        ("wear2mqtt/band/set", .deviceRequest(device: "band", command: "settings")),
        ("wear2mqtt/band/get", .deviceRequest(device: "band", command: "refresh")),
        ("wear2mqtt/no such device/set", .deviceRequest(device: "no such device", command: "settings")),
        // Empty id levels are requests too, refused by RequestTopicRule with an answer (issue 38).
        ("wear2mqtt//set", .deviceRequest(device: "", command: "settings")),
        ("wear2mqtt//request/refresh", .deviceRequest(device: "", command: "refresh")),
    ])
    func incoming(topic: String, expected: IncomingTopic) {
        #expect(layout.classify(topic) == expected)
    }

    @Test("our own publications, other bases and malformed topics are not requests", arguments: [
        "wear2mqtt/bridge/state", "wear2mqtt/bridge/response/scan", "wear2mqtt/bridge/set", "wear2mqtt/bridge/get",
        "wear2mqtt/bridge/request", "wear2mqtt/tag", "wear2mqtt/tag/response/find", "wear2mqtt/tag/request",
        "wear2mqtt/tag/sensor/heart_rate", "wear2mqtt/tag/set/extra", "wear2mqtt//sensor", "wear2mqtt", "wear2mqttx/tag/set",
        "other/tag/set", "",
    ])
    func notOurs(topic: String) {
        #expect(layout.classify(topic) == .notOurs)
    }

    @Test("a base of several levels works the same way")
    func multiLevelBase() {
        let home = TopicLayout(base: "home/wear")
        #expect(home.classify("home/wear/bridge/request/device/remove") == .bridgeRequest(name: "device/remove"))
        #expect(home.classify("home/wear/band/get") == .deviceRequest(device: "band", command: "refresh"))
        #expect(home.classify("home/band/get") == .notOurs)
        #expect(home.sensor("band", .eda) == "home/wear/band/sensor/eda")
    }
}

@Suite("Device ids")
struct DeviceIdentifierTests {
    @Test("the default id is <driver>_<address without colons, lower case>")
    func defaultID() {
        #expect(DeviceIdentifier.defaultID(driver: "heart_rate", address: "A4:C1:38:F0:0B:1E") == "heart_rate_a4c138f00b1e")
        #expect(DeviceIdentifier.isValid(DeviceIdentifier.defaultID(driver: "gofit", address: "AA:BB:CC:DD:EE:FF")))
        #expect(DeviceIdentifier.defaultID(driver: "odd driver/x", address: "AA:BB:CC:DD:EE:FF") == "odd_driver_x_aabbccddeeff")
    }

    @Test("valid ids are 1 to 64 bytes of [A-Za-z0-9_-] and no reserved word in any case", arguments: [
        ("left_wrist", true), ("Polar-H10", true), ("a", true), ("bridge", false), ("", false), ("two words", false),
        ("a/b", false), ("a+", false), ("#", false), ("é", false), ("Bridge", false), ("BRIDGE", false),
        ("request", false), ("Response", false), ("set", false), ("GET", false), ("requests", true), ("bridge2", true),
        (String(repeating: "a", count: 64), true), (String(repeating: "a", count: 65), false),
        (String(repeating: "a", count: 10_000), false), ("..", false), ("../..", false), (" tag", false), ("tag ", false),
        ("\u{202E}gat", false), ("tag\u{200B}", false), ("tag\u{0}", false), ("tag\n", false), ("+", false),
    ])
    func validity(id: String, valid: Bool) {
        #expect(DeviceIdentifier.isValid(id) == valid)
    }

    @Test("a bad name is refused with INVALID_VALUE naming the field and the rule")
    func validation() {
        #expect(throws: CommandError(.invalidValue, "name \"bridge\" is reserved for the gateway's own topics (bridge, get, request, response, set, in any case)")) {
            try DeviceIdentifier.validate("bridge")
        }
        #expect(throws: CommandError(.invalidValue, "name \"Request\" is reserved for the gateway's own topics (bridge, get, request, response, set, in any case)")) {
            try DeviceIdentifier.validate("Request")
        }
        #expect(throws: CommandError(.invalidValue, "name must be at most 64 characters, got 10000")) {
            try DeviceIdentifier.validate(String(repeating: "x", count: 10_000))
        }
        #expect(throws: CommandError(.invalidValue, "name may only contain A-Z, a-z, 0-9, _ and -, got \"my band\"")) {
            try DeviceIdentifier.validate("my band")
        }
        #expect(throws: CommandError(.invalidValue, "name must not be empty")) { try DeviceIdentifier.validate("") }
        #expect(throws: Never.self) { try DeviceIdentifier.validate("my_band") }
    }

    @Test("addresses are accepted in either case and normalized to upper case", arguments: [
        ("aa:bb:cc:dd:ee:ff", "AA:BB:CC:DD:EE:FF"), ("A4:C1:38:F0:0B:1E", "A4:C1:38:F0:0B:1E"),
        ("AABBCCDDEEFF", nil), ("AA:BB:CC:DD:EE", nil), ("GG:BB:CC:DD:EE:FF", nil), ("AA:BB:CC:DD:EE:FF:00", nil),
        ("ＡＡ:BB:CC:DD:EE:FF", nil),
    ])
    func addresses(text: String, expected: String?) {
        #expect(DeviceIdentifier.normalizedAddress(text) == expected)
    }
}
