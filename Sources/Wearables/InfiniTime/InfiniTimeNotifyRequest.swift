/// `request/notify` `{"title","body","category"}`: a notification for the wrist, as a New Alert.
///
/// Pure: the driver writes `alert.encode()`. The text is fitted to the watch's 99 bytes by `InfiniTimeNewAlert`
/// (whole characters, "..." where cut), and the answer says what the watch will show, so a caller sees a cut
/// instead of guessing.
public struct InfiniTimeNotifyRequest: Sendable, Equatable {
    public static let fields = ["title", "body", "category"]
    public static let defaultCategory = InfiniTimeAlertCategory.simpleAlert

    public let alert: InfiniTimeNewAlert
    /// Whether the watch shows less than was asked.
    public let truncated: Bool

    public init(_ reader: RequestReader) throws(CommandError) {
        try reader.rejectUnknownFields(allowed: Self.fields, request: "notify")
        let title = try reader.string("title")
        let body = try reader.string("body") ?? ""
        var category = Self.defaultCategory
        if let name = try reader.string("category") {
            guard let named = InfiniTimeAlertCategory(contractName: name) else {
                throw reader.invalid("category", "must be one of \(RequestReader.list(InfiniTimeAlertCategory.contractNames.map { "\"\($0)\"" }, conjunction: "or"))",
                                     got: .text(name))
            }
            category = named
        }
        guard !(title ?? "").isEmpty || !body.isEmpty else {
            throw CommandError(.invalidValue, "notify needs a non-empty title or body")
        }
        do {
            alert = try InfiniTimeNewAlert(category: category, title: title.flatMap { $0.isEmpty ? nil : $0 }, body: body)
        } catch {
            throw CommandError(.invalidValue, "notify needs text the watch can show (NUL characters are dropped)")
        }
        truncated = alert.title != title.flatMap({ $0.isEmpty ? nil : $0 }) || alert.body != body
    }

    /// What the watch shows, for the answer.
    public var answer: DeviceValue {
        var shown: [String: DeviceValue] = ["category": .text(alert.category.contractName), "body": .text(alert.body),
                                            "truncated": .flag(truncated)]
        if let title = alert.title { shown["title"] = .text(title) }
        return .object(shown)
    }
}

extension InfiniTimeAlertCategory {
    /// The categories a request may name: every one but `all`, which means nothing in a single alert.
    public static let requestable: [InfiniTimeAlertCategory] = allCases.filter { $0 != .all }
    public static var contractNames: [String] { requestable.map(\.contractName) }

    /// snake_case, as requests write it.
    public var contractName: String {
        switch self {
        case .simpleAlert: "simple_alert"
        case .email: "email"
        case .news: "news"
        case .call: "call"
        case .missedCall: "missed_call"
        case .smsMms: "sms_mms"
        case .voiceMail: "voice_mail"
        case .schedule: "schedule"
        case .highPrioritizedAlert: "high_prioritized_alert"
        case .instantMessage: "instant_message"
        case .all: "all"
        }
    }

    public init?(contractName: String) {
        guard let found = Self.requestable.first(where: { $0.contractName == contractName }) else { return nil }
        self = found
    }
}
