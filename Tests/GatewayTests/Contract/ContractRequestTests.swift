import Foundation
import MQTT
import Testing
import Wearables

@testable import Gateway

/// A request published to `topic` with `payload`, as the broker hands it over.
func contractRequest(_ topic: String, _ payload: String, properties: MQTTProperties = MQTTProperties()) -> ContractRequest? {
    contractRequest(topic, Array(payload.utf8), properties: properties)
}

func contractRequest(_ topic: String, _ payload: [UInt8], properties: MQTTProperties = MQTTProperties()) -> ContractRequest? {
    ContractRequest(
        IncomingMessage(topic: topic, payload: payload, qos: .atLeastOnce, retain: false, properties: properties),
        layout: TopicLayout(base: "wear2mqtt"))
}

func contractText(_ message: OutgoingMessage) -> String { String(decoding: message.payload, as: UTF8.self) }

@Suite("Requests: payload, transaction and where the answer goes")
struct ContractRequestTests {
    @Test("publishing {\"vibrations\":3,\"transaction\":\"t1\"} to …/tag/request/find reads the fields and the transaction")
    func readsFieldsAndTransaction() throws {
        let request = try #require(contractRequest("wear2mqtt/tag/request/find", #"{"vibrations":3,"transaction":"t1"}"#))
        #expect(request.target == .device(id: "tag", command: "find"))
        #expect(request.arguments == .success(["vibrations": 3]))
        #expect(request.transaction == "t1")
        #expect(request.replyTo == ResponseDestination(topic: "wear2mqtt/tag/response/find"))
    }

    @Test("an empty payload counts as {}; …/get is request/refresh and is answered on response/refresh")
    func emptyPayload() throws {
        let request = try #require(contractRequest("wear2mqtt/band/get", ""))
        #expect(request.target == .device(id: "band", command: "refresh"))
        #expect(request.arguments == .success([:]))
        #expect(request.transaction == nil)
        #expect(request.response().topic == "wear2mqtt/band/response/refresh")
        #expect(contractText(request.response()) == #"{"status":"ok","data":{}}"#)
    }

    @Test("…/set is answered on response/settings; bridge requests on bridge/response/<name>")
    func defaultResponseTopics() throws {
        #expect(try #require(contractRequest("wear2mqtt/band/set", "{}")).replyTo.topic == "wear2mqtt/band/response/settings")
        let pair = try #require(contractRequest("wear2mqtt/bridge/request/device/pair/confirm", "{}"))
        #expect(pair.target == .bridge(name: "device/pair/confirm"))
        #expect(pair.replyTo.topic == "wear2mqtt/bridge/response/device/pair/confirm")
    }

    @Test("a topic that names no request gives no request")
    func notARequest() {
        #expect(contractRequest("wear2mqtt/tag/availability", "{}") == nil)
    }

    @Test("any JSON value is a transaction and is echoed exactly, in ok and error responses")
    func transactionEcho() throws {
        let request = try #require(contractRequest(
            "wear2mqtt/tag/request/find", #"{"transaction":{"n":[1,2.5,"x"],"ok":true}}"#))
        #expect(request.arguments == .success([:]))
        #expect(contractText(request.response(data: ["level": "high"]))
            == #"{"status":"ok","data":{"level":"high"},"transaction":{"n":[1,2.5,"x"],"ok":true}}"#)
        #expect(contractText(request.response(error: CommandError(.busy, "the device is busy")))
            == #"{"status":"error","error":{"code":"BUSY","message":"the device is busy"},"transaction":{"n":[1,2.5,"x"],"ok":true}}"#)
        let nullTransaction = try #require(contractRequest("wear2mqtt/tag/request/find", #"{"transaction":null}"#))
        #expect(contractText(nullTransaction.response()) == #"{"status":"ok","data":{},"transaction":null}"#)
    }

    @Test("a vendor's own code goes in vendor_code")
    func vendorCode() throws {
        let request = try #require(contractRequest("wear2mqtt/band/request/dfu", "{}"))
        let error = CommandError(.dfuFailed, "the band refused the image", vendorCode: 14)
        #expect(contractText(request.response(.failure(error)))
            == #"{"status":"error","error":{"code":"DFU_FAILED","message":"the band refused the image","vendor_code":14}}"#)
    }

    @Test("MQTT 5: a Response Topic gets the answer, with the request's Correlation Data")
    func mqtt5ResponseTopic() throws {
        let properties = MQTTProperties(responseTopic: "client/42/replies", correlationData: [0xCA, 0xFE])
        let request = try #require(contractRequest("wear2mqtt/tag/request/find", "{}", properties: properties))
        let response = request.response(data: [:])
        #expect(response.topic == "client/42/replies")
        #expect(response.properties.correlationData == [0xCA, 0xFE])
        #expect(response.properties.contentType == "application/json")
        #expect(response.qos == .atLeastOnce)
        #expect(!response.retain)
    }

    @Test("MQTT 5: a Response Topic with a wildcard is refused: INVALID_VALUE on the contract's topic; correlation data stays")
    func invalidResponseTopic() throws {
        let properties = MQTTProperties(responseTopic: "client/+/replies", correlationData: [1])
        let request = try #require(contractRequest("wear2mqtt/tag/request/find", "{}", properties: properties))
        #expect(request.replyTo == ResponseDestination(topic: "wear2mqtt/tag/response/find", correlationData: [1]))
        #expect(request.arguments.commandFailure?.code == .invalidValue)
    }

    @Test("errors also go to the Response Topic")
    func errorToResponseTopic() throws {
        let properties = MQTTProperties(responseTopic: "client/42/replies", correlationData: [7])
        let request = try #require(contractRequest("wear2mqtt/tag/request/find", "not json", properties: properties))
        let response = request.response(error: try #require(request.arguments.commandFailure))
        #expect(response.topic == "client/42/replies")
        #expect(response.properties.correlationData == [7])
    }

    // MARK: INVALID_PAYLOAD

    @Test("payloads that are not a JSON object are INVALID_PAYLOAD with a sentence saying why", arguments: [
        ("not json", "payload is not valid JSON: expected a value but found character 'n' at byte 0"),
        ("[1,2,3]", "payload must be a JSON object such as {\"key\":\"value\"}, got an array"),
        ("\"find\"", "payload must be a JSON object such as {\"key\":\"value\"}, got a string"),
        ("3", "payload must be a JSON object such as {\"key\":\"value\"}, got a number"),
        ("null", "payload must be a JSON object such as {\"key\":\"value\"}, got null"),
        ("true", "payload must be a JSON object such as {\"key\":\"value\"}, got a boolean"),
        ("{\"vibrations\":3", "payload is not valid JSON: object is not closed: expected ',' or '}' at byte 15"),
        ("{\"a\":1,\"a\":2}", "payload is ambiguous: key \"a\" appears twice in one object"),
    ])
    func notAnObject(payload: String, message: String) throws {
        let request = try #require(contractRequest("wear2mqtt/tag/request/find", payload))
        #expect(request.arguments == .failure(CommandError(.invalidPayload, message)))
        #expect(request.transaction == nil)
        let answer = contractText(request.response(error: try #require(request.arguments.commandFailure)))
        let expected = ##"{"status":"error","error":{"code":"INVALID_PAYLOAD","message":""## + jsonEscaped(message) + ##""}}"##
        #expect(answer == expected)
    }

    @Test("a 1 MiB payload is INVALID_PAYLOAD, refused by size")
    func oneMebibyte() throws {
        var payload = Array(#"{"transaction":1,"x":""#.utf8)
        payload += [UInt8](repeating: UInt8(ascii: "a"), count: (1 << 20) - payload.count - 2)
        payload += Array(#""}"#.utf8)
        #expect(payload.count == 1 << 20)
        let request = try #require(contractRequest("wear2mqtt/tag/request/settings", payload))
        #expect(request.arguments == .failure(CommandError(
            .invalidPayload, "payload is 1048576 bytes; requests may be at most 65536 bytes")))
        #expect(request.transaction == nil)
    }

    @Test("invalid UTF-8 is INVALID_PAYLOAD")
    func invalidUTF8() throws {
        let request = try #require(contractRequest("wear2mqtt/tag/request/find", [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D]))
        #expect(request.arguments == .failure(CommandError(.invalidPayload, "payload is not valid UTF-8")))
    }

    @Test("deep nesting is INVALID_PAYLOAD")
    func deepNesting() throws {
        let payload = #"{"a":"# + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}"
        let request = try #require(contractRequest("wear2mqtt/tag/request/configure", payload))
        #expect(request.arguments == .failure(CommandError(
            .invalidPayload, "payload nests arrays or objects deeper than 64 levels")))
    }
}

private func jsonEscaped(_ text: String) -> String {
    text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
}

extension Result {
    var commandFailure: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
