import Wearables

/// What a request's own topic must look like before any of it is used to build the answer's topic.
///
/// A request topic's id and command levels come from the client; echoed into `…/response/<command>`, an empty
/// level, `..`, a bidirectional override or a 10 KB level would reach every subscriber of the response topics. So
/// such a request is refused (never sanitized: a rewritten name could be another, real, command), without being
/// executed, and answered on a fixed topic: `<base>/<id>/response/invalid_request` when the id is a valid device id,
/// else `<base>/bridge/response/invalid_request`. The error text does not repeat the offending level either.
enum RequestTopicRule {
    /// The level that answers a request whose topic is refused.
    static let invalidRequestLevel = "invalid_request"
    /// The longest command name (`device/pair/confirm` is 19) with room to spare.
    static let maxCommandLength = 64

    /// Why `target` cannot be answered on its own topics, or `nil`.
    static func problem(_ target: ContractRequest.Target) -> CommandError? {
        switch target {
        case .bridge(let name):
            return commandProblem(name)
        case .device(let id, let command):
            if !DeviceIdentifier.isValid(id) {
                return CommandError(
                    .deviceNotFound,
                    "the request topic's device level is not a device id (1 to \(DeviceIdentifier.maxLength) of "
                        + "\(ConfigurationRules.segmentCharacters), not a reserved word); the request was not executed")
            }
            return commandProblem(command)
        }
    }

    /// The contract's response topic for `target`, or the fixed `invalid_request` one when `problem` refuses it.
    static func defaultResponseTopic(_ target: ContractRequest.Target, layout: TopicLayout) -> String {
        switch target {
        case .bridge(let name):
            return layout.bridgeResponse(commandProblem(name) == nil ? name : invalidRequestLevel)
        case .device(let id, let command):
            guard DeviceIdentifier.isValid(id) else { return layout.bridgeResponse(invalidRequestLevel) }
            return layout.deviceResponse(id, command: commandProblem(command) == nil ? command : invalidRequestLevel)
        }
    }

    /// One or more `/`-separated levels of `[A-Za-z0-9_-]`, at most ``maxCommandLength`` bytes.
    private static func commandProblem(_ command: String) -> CommandError? {
        if command.isEmpty {
            return CommandError(.unknownCommand, "the request topic has no command after request/; the request was not executed")
        }
        let levels = command.split(separator: "/", omittingEmptySubsequences: false)
        guard command.utf8.count <= maxCommandLength, levels.allSatisfy(ConfigurationRules.isTopicSegment) else {
            return CommandError(
                .unknownCommand,
                "the request topic's command is not a command name (levels of \(ConfigurationRules.segmentCharacters), "
                    + "at most \(maxCommandLength) bytes); the request was not executed")
        }
        return nil
    }
}
