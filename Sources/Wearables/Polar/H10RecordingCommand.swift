/// `request/recording` of the `polar` driver: one of the H10's six recording actions, read and checked from the
/// request object before anything is sent (the gateway reads it through `PolarDriver.contractArguments`, so a wrong
/// request is refused even while the strap is away).
///
/// `{"action":"start","identifier":"run1","sample_type":"hr"|"rr","interval_s":1|5}` (`sample_type` defaults to
/// `hr`, `interval_s` to 1, as the SDK's `startRecording` does without one; the strap ignores the interval for RR),
/// `{"action":"stop"}`, `{"action":"status"}`, `{"action":"list"}`, `{"action":"fetch","identifier":"run1"}`,
/// `{"action":"remove","identifier":"run1"}`. Pure: the driver turns it into `H10RecordingRequest`s.
public enum H10RecordingCommand: Sendable, Equatable {
    case start(identifier: String, sampleType: H10RecordingSampleType, interval: H10RecordingInterval)
    case stop
    case status
    case list
    case fetch(identifier: String)
    case remove(identifier: String)

    public static let actions = ["start", "stop", "status", "list", "fetch", "remove"]

    public init(_ reader: RequestReader) throws(CommandError) {
        let action = try reader.required(try reader.choice("action", from: Self.actions), "action",
                                         "one of \(RequestReader.list(Self.actions.map { "\"\($0)\"" }, conjunction: "or"))")
        let request = "recording \(action)"
        switch action {
        case "start":
            try reader.rejectUnknownFields(allowed: ["action", "identifier", "sample_type", "interval_s"], request: request)
            let identifier = try Self.identifier(reader)
            let typeName = try reader.choice("sample_type", from: H10RecordingSampleType.allCases.map(\.rawValue))
            var interval = H10RecordingInterval.oneSecond
            if let value = reader.arguments["interval_s"] {
                guard let seconds = value.integer, let chosen = H10RecordingInterval(rawValue: Int(seconds)) else {
                    throw reader.invalid("interval_s", "must be 1 or 5 (seconds)", got: value)
                }
                interval = chosen
            }
            self = .start(identifier: identifier, sampleType: typeName.flatMap(H10RecordingSampleType.init) ?? .heartRate,
                          interval: interval)
        case "fetch", "remove":
            try reader.rejectUnknownFields(allowed: ["action", "identifier"], request: request)
            let identifier = try Self.identifier(reader)
            self = action == "fetch" ? .fetch(identifier: identifier) : .remove(identifier: identifier)
        default:
            try reader.rejectUnknownFields(allowed: ["action"], request: request)
            self = action == "stop" ? .stop : action == "status" ? .status : .list
        }
    }

    /// 1…64 characters (`PolarH10OfflineExerciseApi.startRecording`; UTF-16 units, as Java counts them). The strap
    /// makes it a directory name ("/<identifier>/SAMPLES.BPB"), so "/", "." and "..", and control characters,
    /// which no path should hold, are refused too.
    private static func identifier(_ reader: RequestReader) throws(CommandError) -> String {
        let rule = "must be 1 to 64 characters, without \"/\" or control characters, and not \".\" or \"..\""
        let identifier = try reader.required(try reader.string("identifier"), "identifier", "the recording's name, 1 to 64 characters")
        guard H10RecordingRequest.identifierLengths.contains(identifier.utf16.count), !identifier.contains("/"),
              identifier != ".", identifier != "..",
              !identifier.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw reader.invalid("identifier", rule, got: .text(identifier))
        }
        return identifier
    }

    /// The action's name, for messages.
    public var action: String {
        switch self {
        case .start: "start"
        case .stop: "stop"
        case .status: "status"
        case .list: "list"
        case .fetch: "fetch"
        case .remove: "remove"
        }
    }

    /// "/<identifier>/SAMPLES.BPB": where the H10 keeps a recording (the SDK's H10 listing).
    public static func path(of identifier: String) -> String {
        "/\(identifier)/\(H10ExerciseListing.samplesFileName)"
    }
}
