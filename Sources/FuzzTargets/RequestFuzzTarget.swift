import Gateway
import MQTT
import Wearables

extension FuzzTarget {
    /// A request as the broker delivers it: the topic (and the MQTT 5 Response Topic) are the input up to its
    /// first zero byte, the payload the rest. Every bridge request and device command, and every driver's own
    /// reading of its arguments, gets the parsed payload; the answer must go to a topic the gateway may publish
    /// on and must be JSON.
    static let request = FuzzTarget(
        name: "request",
        summary: "contract requests: topics, Response Topic confinement, every bridge and device command's arguments"
    ) { bytes in
        let cut = bytes.firstIndex(of: 0) ?? bytes.endIndex
        let suffix = String(decoding: bytes[..<cut], as: UTF8.self)
        let payload = Array(bytes[cut...].dropFirst())
        _ = DeviceIdentifier.problem(suffix)
        _ = DeviceIdentifier.normalizedAddress(suffix)

        let message = IncomingMessage(
            topic: requestLayout.base + "/" + suffix, payload: payload, qos: .atLeastOnce, retain: false,
            properties: MQTTProperties(responseTopic: suffix, correlationData: Array(bytes.prefix(8))))
        guard let request = ContractRequest(message, layout: requestLayout) else { return }
        checkAnswer(request.response(error: CommandError(.invalidPayload, suffix)))

        guard case .success(let arguments) = request.arguments else { return }
        checkAnswer(request.response(data: arguments))
        for name in BridgeRequest.names { _ = try? BridgeRequest(name: name, arguments: arguments) }
        for command in DeviceCommandParser.commandNames(WearableDrivers.all) {
            _ = try? DeviceCommandParser.parse(command: command, arguments: arguments, registry: WearableDrivers.all)
            for driver in WearableDrivers.all.drivers { _ = try? driver.contractArguments(for: command, arguments) }
        }
        _ = try? GoFITSettingsUpdate.parse(arguments, current: [:])
        _ = try? ActiGraphConfigurationRequest.parse(
            arguments, current: ActiGraphStreamSettings(rawStreaming: false, rawRateHz: 30, imu: []))
    }

    static let requestLayout = TopicLayout(base: "wear2mqtt")
}

/// An answer goes to a topic one may publish on: under the base only on a `<base>/<bridge or id>/response/…`
/// level (docs/mqtt-api.md, `ResponseTopicRule`), else outside it and not a broker's `$` topic; and it is a JSON
/// object with a status.
private func checkAnswer(_ answer: OutgoingMessage) {
    let base = FuzzTarget.requestLayout.base + "/"
    precondition(TopicValidation.isValidPublishTopic(answer.topic), "an answer to the invalid topic \(answer.topic)")
    if answer.topic.hasPrefix(base) {
        let levels = answer.topic.dropFirst(base.count).split(separator: "/", omittingEmptySubsequences: false)
        precondition(levels.count >= 3 && levels[1] == "response" && levels.allSatisfy { !$0.isEmpty },
                     "an answer on the gateway's own topic \(answer.topic)")
    } else {
        precondition(!answer.topic.hasPrefix("$"), "an answer on the broker's topic \(answer.topic)")
    }
    guard case .object(let members)? = try? JSONParser.parse(answer.payload, limits: JSONLimits(maximumBytes: 1 << 22)),
          members["status"] != nil else {
        preconditionFailure("an answer that is not a JSON object with a status: \(answer.payload)")
    }
}
