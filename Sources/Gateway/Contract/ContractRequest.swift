import MQTT
import Wearables

/// One request of the contract as it arrived, before the command in it is understood: who it is for, where
/// the answer goes, the `transaction` to echo, and the payload object (or why the payload is unusable).
///
/// Reading never throws: every message that names a request gets an answer, and a bad payload is just a
/// request whose `arguments` is a failure. Requests carry no state, so the gateway can build one per message
/// on any thread.
public struct ContractRequest: Sendable, Equatable {
    public enum Target: Sendable, Equatable {
        /// `bridge/request/<name>`.
        case bridge(name: String)
        /// `<id>/request/<command>`; `<id>/set` and `<id>/get` arrive as `settings` and `refresh`.
        case device(id: String, command: String)
    }

    public var target: Target
    public var replyTo: ResponseDestination
    /// The request's `transaction`, any JSON value; `nil` when absent or unreadable. Echoed in the response.
    public var transaction: DeviceValue?
    /// The payload object without `transaction`; an empty payload counts as `{}`. A failure is the request's
    /// answer, and the request is not executed: `INVALID_PAYLOAD` for the payload, `INVALID_VALUE` for a refused
    /// Response Topic (``ResponseTopicRule``), `DEVICE_NOT_FOUND` or `UNKNOWN_COMMAND` for a refused request topic
    /// (``RequestTopicRule``).
    public var arguments: Result<[String: DeviceValue], CommandError>

    /// Reads a message from one of ``TopicLayout/requestSubscriptions``; `nil` when the topic names no request.
    public init?(_ message: IncomingMessage, layout: TopicLayout, responseTopics: ResponseTopicRule? = nil,
                 limits: JSONLimits = .requests) {
        let target: Target
        switch layout.classify(message.topic) {
        case .notOurs: return nil
        case .bridgeRequest(let name): target = .bridge(name: name)
        case .deviceRequest(let id, let command): target = .device(id: id, command: command)
        }
        self.init(target: target, payload: message.payload, properties: message.properties, layout: layout,
                  responseTopics: responseTopics, limits: limits)
        if message.droppedPayloadBytes > 0 {
            arguments = .failure(CommandError(
                .invalidPayload, "the payload has \(message.droppedPayloadBytes) bytes, over the \(limits.maximumBytes) a request "
                    + "may have; it was not read, and the request was not executed"))
        }
    }

    /// `responseTopics` defaults to the rule for `layout` with no prefix outside it.
    public init(target: Target, payload: [UInt8], properties: MQTTProperties = MQTTProperties(),
                layout: TopicLayout, responseTopics: ResponseTopicRule? = nil, limits: JSONLimits = .requests) {
        self.target = target
        replyTo = ResponseDestination(topic: RequestTopicRule.defaultResponseTopic(target, layout: layout),
                                      correlationData: properties.correlationData)
        transaction = nil
        arguments = .success([:])
        // The payload is read even for a refused request, so its transaction is echoed.
        if !payload.isEmpty { readPayload(payload, limits: limits) }
        if let refused = RequestTopicRule.problem(target) {
            arguments = .failure(refused)
        }
        if let requested = properties.responseTopic {
            let rule = responseTopics ?? ResponseTopicRule(layout: layout)
            if let problem = rule.problem(requested, for: target) {
                arguments = .failure(CommandError(.invalidValue, problem + "; the request was not executed"))
            } else {
                replyTo.topic = requested
            }
        }
    }

    private mutating func readPayload(_ payload: [UInt8], limits: JSONLimits) {
        let value: DeviceValue
        do throws(JSONParsingError) {
            value = try JSONParser.parse(payload, limits: limits)
        } catch {
            arguments = .failure(CommandError(.invalidPayload, error.description))
            return
        }
        guard case .object(var members) = value else {
            arguments = .failure(CommandError(
                .invalidPayload, "payload must be a JSON object such as {\"key\":\"value\"}, got \(value.kindDescription)"))
            return
        }
        transaction = members.removeValue(forKey: "transaction")
        arguments = .success(members)
    }

    /// The request's name as the contract spells it: `device/add`, `find`.
    public var name: String {
        switch target {
        case .bridge(let name): name
        case .device(_, let command): command
        }
    }

    // MARK: Answers

    /// `{"status":"ok","data":{…},"transaction":…}`.
    public func response(data: [String: DeviceValue] = [:]) -> OutgoingMessage {
        replyTo.message(payload: ResponsePayload.ok(data: data, transaction: transaction))
    }

    /// `{"status":"error","error":{"code":…,"message":…,"vendor_code":…},"transaction":…}`.
    public func response(error: CommandError) -> OutgoingMessage {
        replyTo.message(payload: ResponsePayload.error(error, transaction: transaction))
    }

    public func response(_ result: Result<[String: DeviceValue], CommandError>) -> OutgoingMessage {
        switch result {
        case .success(let data): response(data: data)
        case .failure(let error): response(error: error)
        }
    }
}

/// Where a response is published: the request's MQTT 5 Response Topic with its Correlation Data when it
/// has one that ``ResponseTopicRule`` accepts, else the contract's `…/response/<name>` (with the correlation data
/// too, so a refusal can still be matched to its request).
public struct ResponseDestination: Sendable, Equatable {
    public var topic: String
    public var correlationData: [UInt8]?

    public init(topic: String, correlationData: [UInt8]? = nil) {
        self.topic = topic
        self.correlationData = correlationData
    }

    /// Responses are QoS 1 and not retained: an answer is for the one who asked, once.
    public func message(payload: [UInt8]) -> OutgoingMessage {
        OutgoingMessage(
            topic: topic, payload: payload, qos: .atLeastOnce, retain: false,
            properties: MQTTProperties(correlationData: correlationData, contentType: "application/json"))
    }
}

/// The bodies of responses, keys in the contract's order.
public enum ResponsePayload {
    public static func ok(data: [String: DeviceValue], transaction: DeviceValue?) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("status", "ok")
        writer.key("data")
        writer.value(.object(data))
        if let transaction {
            writer.key("transaction")
            writer.value(transaction)
        }
        writer.endObject()
        return writer.bytes
    }

    public static func error(_ error: CommandError, transaction: DeviceValue?) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("status", "error")
        writer.key("error")
        writer.beginObject()
        writer.field("code", error.code.rawValue)
        writer.field("message", error.message)
        writer.optionalField("vendor_code", error.vendorCode)
        writer.endObject()
        if let transaction {
            writer.key("transaction")
            writer.value(transaction)
        }
        writer.endObject()
        return writer.bytes
    }
}

extension DeviceValue {
    /// "an array", "a string", … for error sentences.
    var kindDescription: String {
        switch self {
        case .null: "null"
        case .flag: "a boolean"
        case .integer, .number: "a number"
        case .text: "a string"
        case .list: "an array"
        case .object: "an object"
        }
    }
}
