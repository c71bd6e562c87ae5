/// How a simulated device pairs (which of its own input and output the user uses), and what that means for
/// bluetoothd's agent: the SMP association models of the Core Specification (Vol 3, Part H, 2.3.5.1) reduced
/// to the agent call BlueZ makes (`src/device.c`, `src/agent.c`).
enum PairingMethod: String, Sendable, CaseIterable {
    /// No user involvement (no MITM protection); no agent call.
    case justWorks = "just_works"
    /// The device shows a passkey that the user types on the central: Agent1.RequestPasskey.
    case requestPasskey = "request_passkey"
    /// The central shows a passkey that the user types on the device: Agent1.DisplayPasskey.
    case displayPasskey = "display_passkey"
    /// Both show a number and the user confirms they match (LE Secure Connections): Agent1.RequestConfirmation.
    case confirm
}

/// An agent's declared IO capability (`RegisterAgent`'s second argument).
enum AgentCapability: String, Sendable, CaseIterable {
    case displayOnly = "DisplayOnly"
    case displayYesNo = "DisplayYesNo"
    case keyboardOnly = "KeyboardOnly"
    case noInputNoOutput = "NoInputNoOutput"
    case keyboardDisplay = "KeyboardDisplay"

    /// BlueZ takes an empty capability as KeyboardDisplay (`parse_io_capability` in `src/agent.c`).
    init?(registering text: String) {
        if text.isEmpty { self = .keyboardDisplay } else { self.init(rawValue: text) }
    }

    var canType: Bool { self == .keyboardOnly || self == .keyboardDisplay }
    var canShow: Bool { self != .noInputNoOutput && self != .keyboardOnly }
    var canConfirm: Bool { self == .displayYesNo || self == .keyboardDisplay }
}

enum PairingStep: Equatable {
    case justWorks
    case requestPasskey
    case displayPasskey
    case requestConfirmation
    /// The device requires protection the agent cannot give (or there is no agent): SMP fails, and BlueZ answers
    /// AuthenticationFailed.
    case fail
}

enum PairingAssociation {
    /// `agent` is nil when neither the caller nor anyone as default registered one (BlueZ then pairs as
    /// NoInputNoOutput).
    static func step(for method: PairingMethod, agent: AgentCapability?) -> PairingStep {
        let capability = agent ?? .noInputNoOutput
        switch method {
        case .justWorks:
            return .justWorks
        case .requestPasskey:
            return capability.canType ? .requestPasskey : .fail
        case .displayPasskey:
            if capability.canShow { return .displayPasskey }
            return capability == .keyboardOnly ? .requestPasskey : .fail
        case .confirm:
            if capability.canConfirm { return .requestConfirmation }
            return capability == .keyboardOnly ? .requestPasskey : .fail
        }
    }
}

/// The agents registered with AgentManager1, one per D-Bus client, and the default one.
struct AgentRegistry: Sendable, Equatable {
    struct Agent: Sendable, Equatable {
        var owner: String
        var path: String
        var capability: AgentCapability
    }

    enum Failure: Error, Equatable { case invalidCapability, alreadyExists, doesNotExist }

    private(set) var agents: [String: Agent] = [:]
    private(set) var defaultOwner: String?

    mutating func register(owner: String, path: String, capability text: String) throws(Failure) {
        guard let capability = AgentCapability(registering: text) else { throw .invalidCapability }
        guard agents[owner] == nil else { throw .alreadyExists }
        agents[owner] = Agent(owner: owner, path: path, capability: capability)
    }

    mutating func unregister(owner: String, path: String) throws(Failure) {
        guard agents[owner]?.path == path else { throw .doesNotExist }
        remove(owner: owner)
    }

    mutating func requestDefault(owner: String, path: String) throws(Failure) {
        guard agents[owner]?.path == path else { throw .doesNotExist }
        defaultOwner = owner
    }

    mutating func remove(owner: String) {
        agents[owner] = nil
        if defaultOwner == owner { defaultOwner = nil }
    }

    /// The agent BlueZ asks on behalf of `client`: its own, else the default (`agent_get` in `src/agent.c`).
    func agent(for client: String) -> Agent? {
        agents[client] ?? defaultOwner.flatMap { agents[$0] }
    }
}
