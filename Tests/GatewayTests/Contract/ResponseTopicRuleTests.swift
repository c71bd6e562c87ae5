import MQTT
import Testing
import Wearables

@testable import Gateway

/// Issue 24: a request could name any topic as its Response Topic, and a hostile request topic was echoed into
/// the answer's topic.
@Suite("Requests: confined response topics and sane request topics")
struct ResponseTopicRuleTests {
    static let rule = "an MQTT 5 Response Topic must be under wear2mqtt/tag/response/ or outside wear2mqtt/"

    func asking(_ topic: String, replyTo responseTopic: String, payload: String = #"{"transaction":"t9"}"#) throws -> ContractRequest {
        try #require(contractRequest(topic, payload, properties: MQTTProperties(responseTopic: responseTopic, correlationData: [4, 2])))
    }

    @Test("a Response Topic outside the base, or under the requester's own response level, gets the answer", arguments: [
        ("wear2mqtt/tag/request/find", "client/42/replies"),
        ("wear2mqtt/tag/request/find", "wear2mqtt-other/x"),
        ("wear2mqtt/tag/request/find", "wear2mqtt/tag/response/client42"),
        ("wear2mqtt/tag/request/find", "wear2mqtt/tag/response/a/b/c"),
        ("wear2mqtt/bridge/request/scan", "wear2mqtt/bridge/response/inbox/7"),
        ("wear2mqtt/bridge/request/scan", "replies"),
    ])
    func accepted(requestTopic: String, responseTopic: String) throws {
        let request = try asking(requestTopic, replyTo: responseTopic)
        #expect(request.arguments == .success([:]))
        #expect(request.replyTo == ResponseDestination(topic: responseTopic, correlationData: [4, 2]))
    }

    @Test("a Response Topic on a gateway-owned topic, a wildcard, an empty level or $SYS is refused: INVALID_VALUE on the contract's own topic, with the transaction and the correlation data, and the request is not executed", arguments: [
        ("wear2mqtt/bridge/state", "; the gateway's own topics are not reply inboxes"),
        ("wear2mqtt/bridge/devices", "; the gateway's own topics are not reply inboxes"),
        ("wear2mqtt/tag", "; the gateway's own topics are not reply inboxes"),
        ("wear2mqtt/tag/availability", "; the gateway's own topics are not reply inboxes"),
        ("wear2mqtt/tag/sensor/heart_rate", "; the gateway's own topics are not reply inboxes"),
        ("wear2mqtt/tag/request/find", "; the gateway's own topics are not reply inboxes"),
        ("wear2mqtt/tag/set", "; the gateway's own topics are not reply inboxes"),
        ("wear2mqtt/other/response/find", "; the gateway's own topics are not reply inboxes"),
        ("wear2mqtt/bridge/response/scan", "; the gateway's own topics are not reply inboxes"),
        ("wear2mqtt/tag/response", "; the gateway's own topics are not reply inboxes"),
        ("wear2mqtt", "; the gateway's own topics are not reply inboxes"),
        ("$SYS/broker/uptime", "; $ topics belong to the broker"),
        ("client/+/replies", ", without the wildcards + and #"),
        ("client/#", ", without the wildcards + and #"),
        ("wear2mqtt/tag/response/", ", without empty levels (a leading, trailing or double '/')"),
        ("wear2mqtt/tag/response//x", ", without empty levels (a leading, trailing or double '/')"),
        ("/replies", ", without empty levels (a leading, trailing or double '/')"),
        ("", ", with 1 to 256 bytes"),
        (String(repeating: "r", count: 257), ", with 1 to 256 bytes"),
        ("replies/\u{202E}txt", ", without control or invisible formatting characters"),
        ("replies/a\u{0}b", ", without control or invisible formatting characters"),
        ("replies/a\nb", ", without control or invisible formatting characters"),
    ])
    func refused(responseTopic: String, why: String) throws {
        let request = try asking("wear2mqtt/tag/request/find", replyTo: responseTopic)
        #expect(request.arguments == .failure(CommandError(.invalidValue, Self.rule + why + "; the request was not executed")))
        #expect(request.replyTo == ResponseDestination(topic: "wear2mqtt/tag/response/find", correlationData: [4, 2]))
        #expect(request.transaction == "t9")
    }

    @Test("with Home Assistant's discovery on, its prefix and status topic are the gateway's too")
    func homeAssistantPrefix() throws {
        let rule = ResponseTopicRule(layout: TopicLayout(base: "wear2mqtt"), ownedPrefixes: ["homeassistant", "homeassistant/status"])
        let target = ContractRequest.Target.device(id: "tag", command: "find")
        #expect(rule.problem("homeassistant/sensor/x/config", for: target)
            == "an MQTT 5 Response Topic must be under wear2mqtt/tag/response/ or outside wear2mqtt/ and homeassistant/ and homeassistant/status/; the gateway's own topics are not reply inboxes")
        #expect(rule.problem("homeassistant/status", for: target) != nil)
        #expect(rule.problem("homeassistant2/x", for: target) == nil)
    }

    @Test("a request with an empty, hostile or overlong command level is refused, not executed, and answered on …/response/invalid_request", arguments: [
        ("wear2mqtt/bridge/request/", "wear2mqtt/bridge/response/invalid_request",
         "the request topic has no command after request/; the request was not executed"),
        ("wear2mqtt/bridge/request/../..", "wear2mqtt/bridge/response/invalid_request", nil),
        ("wear2mqtt/bridge/request/scan//stop", "wear2mqtt/bridge/response/invalid_request", nil),
        ("wear2mqtt/bridge/request/scan/", "wear2mqtt/bridge/response/invalid_request", nil),
        ("wear2mqtt/bridge/request/\u{202E}nacs", "wear2mqtt/bridge/response/invalid_request", nil),
        ("wear2mqtt/tag/request/", "wear2mqtt/tag/response/invalid_request",
         "the request topic has no command after request/; the request was not executed"),
        ("wear2mqtt/tag/request/fi nd", "wear2mqtt/tag/response/invalid_request", nil),
        ("wear2mqtt/tag/request/" + String(repeating: "f", count: 65), "wear2mqtt/tag/response/invalid_request", nil),
    ])
    func hostileCommand(topic: String, answeredOn: String, message: String?) throws {
        let request = try #require(contractRequest(topic, #"{"transaction":1}"#))
        let error = try #require(request.arguments.commandFailure)
        #expect(error.code == .unknownCommand)
        #expect(error.message == (message ?? "the request topic's command is not a command name (levels of A-Z, a-z, 0-9, _ and -, at most 64 bytes); the request was not executed"))
        #expect(request.replyTo.topic == answeredOn)
        #expect(request.transaction == 1)
    }

    @Test("a request whose device level is no valid id is DEVICE_NOT_FOUND on bridge/response/invalid_request", arguments: [
        "wear2mqtt/\u{202E}gat/request/find", "wear2mqtt/../request/find", "wear2mqtt/ tag/request/find",
        "wear2mqtt/" + String(repeating: "d", count: 10_000) + "/request/find", "wear2mqtt/BRIDGE/request/find",
        "wear2mqtt/Bridge/set", "wear2mqtt/request/get", "wear2mqtt/t\u{200B}ag/request/\u{202E}x",
    ])
    func hostileDevice(topic: String) throws {
        let request = try #require(contractRequest(topic, "{}"))
        #expect(request.arguments.commandFailure?.code == .deviceNotFound)
        #expect(request.replyTo.topic == "wear2mqtt/bridge/response/invalid_request")
    }

    @Test("a hostile device level cannot claim a Response Topic under itself; outside the base still works")
    func hostileDeviceOwnLevel() throws {
        let inside = try asking("wear2mqtt/../request/find", replyTo: "wear2mqtt/../response/find")
        #expect(inside.arguments.commandFailure?.code == .invalidValue)
        #expect(inside.replyTo.topic == "wear2mqtt/bridge/response/invalid_request")
        let outside = try asking("wear2mqtt/../request/find", replyTo: "client/1")
        #expect(outside.arguments.commandFailure?.code == .deviceNotFound)
        #expect(outside.replyTo.topic == "client/1")
    }

    @Test("fuzz: random request topics and Response Topics never crash, fail only with the contract's codes, and never answer on a gateway-owned, wildcard, empty-level or invisible-character topic")
    func fuzz() {
        var random = SeededRandom(seed: 0x24_2024)
        let pieces = ["wear2mqtt", "bridge", "request", "response", "tag", "set", "get", "state", "find", "scan", "..", "",
                      "+", "#", "$SYS", "\u{202E}", "\u{200B}", "\u{0}", " ", "a", "BRIDGE", "availability", "x/y"]
        let allowedCodes: Set<CommandError.Code> = [.invalidValue, .invalidPayload, .unknownCommand, .deviceNotFound]
        let base = "wear2mqtt/"
        var checked = 0
        for _ in 0..<5_000 {
            let chosen = (0..<Int.random(in: 0...4, using: &random)).map { _ in pieces.randomElement(using: &random)! }
            let device = pieces.randomElement(using: &random)!
            let topic = switch Int.random(in: 0..<10, using: &random) {
            case 0: chosen.joined(separator: "/")
            case 1: "wear2mqtt/\(device)/set"
            case 2: "wear2mqtt/\(device)/get"
            case 3...5: "wear2mqtt/bridge/request/" + chosen.joined(separator: "/")
            default: "wear2mqtt/\(device)/request/" + chosen.joined(separator: "/")
            }
            let reply: String? = Bool.random(using: &random)
                ? (0..<Int.random(in: 1...5, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined(separator: "/")
                : nil
            guard let request = contractRequest(topic, "{}", properties: MQTTProperties(responseTopic: reply)) else { continue }
            checked += 1
            if case .failure(let error) = request.arguments { #expect(allowedCodes.contains(error.code)) }
            let answer = request.replyTo.topic
            let levels = answer.split(separator: "/", omittingEmptySubsequences: false)
            let hasEmptyLevel = levels.contains { $0.isEmpty }
            #expect(!hasEmptyLevel, "\(answer)")
            #expect(!answer.contains("+") && !answer.contains("#") && !answer.hasPrefix("$"), "\(answer)")
            let hasInvisible = answer.unicodeScalars.contains { ResponseTopicRule.isInvisible($0) }
            #expect(!hasInvisible, "\(answer)")
            if answer.hasPrefix(base) {
                #expect(levels.count >= 3 && levels[levels.count - 1] != "" && answer.contains("/response/"), "\(answer)")
                #expect(levels[1] == "bridge" || DeviceIdentifier.isValid(String(levels[1])), "\(answer)")
            }
        }
        #expect(checked > 4_000)
        // Every truncation of a valid request topic and of a valid Response Topic.
        let topic = "wear2mqtt/bridge/request/device/pair/confirm"
        let reply = "wear2mqtt/bridge/response/inbox/\u{00E9}7"
        for cut in 0...topic.unicodeScalars.count {
            let truncated = String(String.UnicodeScalarView(topic.unicodeScalars.prefix(cut)))
            guard let request = contractRequest(truncated, "{}") else { continue }
            if case .failure(let error) = request.arguments { #expect(allowedCodes.contains(error.code), "\(truncated)") }
            #expect(!request.replyTo.topic.hasSuffix("/"), "\(truncated)")
        }
        for cut in 0...reply.unicodeScalars.count {
            let truncated = String(String.UnicodeScalarView(reply.unicodeScalars.prefix(cut)))
            let request = contractRequest(topic, "{}", properties: MQTTProperties(responseTopic: truncated))
            let accepted = request?.replyTo.topic == truncated
            let underOwnLevel = truncated.hasPrefix("wear2mqtt/bridge/response/") && !truncated.hasSuffix("/")
            let outsideBase = !truncated.isEmpty && !truncated.hasPrefix("wear2mqtt")
            #expect(accepted == (underOwnLevel || outsideBase), "\(truncated)")
        }
    }
}

/// SplitMix64: the same sequence on every run.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E4B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
