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
    /// The payload object without `transaction`; an empty payload counts as `{}`. A failure is always
    /// `INVALID_PAYLOAD`.
    public var arguments: Result<[String: DeviceValue], CommandError>

    /// Reads a message from one of ``TopicLayout/requestSubscriptions``; `nil` when the topic names no request.
    public init?(_ message: IncomingMessage, layout: TopicLayout, limits: JSONLimits = .requests) {
        let target: Target
        switch layout.classify(message.topic) {
        case .notOurs: return nil
        case .bridgeRequest(let name): target = .bridge(name: name)
        case .deviceRequest(let id, let command): target = .device(id: id, command: command)
        }
        self.init(target: target, payload: message.payload, properties: message.properties, layout: layout, limits: limits)
    }

    public init(target: Target, payload: [UInt8], properties: MQTTProperties = MQTTProperties(),
                layout: TopicLayout, limits: JSONLimits = .requests) {
        self.target = target
        replyTo = ResponseDestination(target: target, properties: properties, layout: layout)
        transaction = nil
        guard !payload.isEmpty else {
            arguments = .success([:])
            return
        }
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
/// has one, else the contract's `…/response/<name>`.
///
/// A Response Topic that is not a valid topic to publish to (empty, or with `+` or `#`) is ignored in
/// favour of the contract's topic; the correlation data still goes along.
public struct ResponseDestination: Sendable, Equatable {
    public var topic: String
    public var correlationData: [UInt8]?

    public init(topic: String, correlationData: [UInt8]? = nil) {
        self.topic = topic
        self.correlationData = correlationData
    }

    init(target: ContractRequest.Target, properties: MQTTProperties, layout: TopicLayout) {
        if let requested = properties.responseTopic, TopicValidation.isValidPublishTopic(requested) {
            topic = requested
        } else {
            switch target {
            case .bridge(let name): topic = layout.bridgeResponse(name)
            case .device(let id, let command): topic = layout.deviceResponse(id, command: command)
            }
        }
        correlationData = properties.correlationData
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
