import Wearables

/// One pairing in progress: BlueZ's Pair call on one side, the MQTT requests on the other.
actor PairingFlow {
    enum Outcome { case codeRequired, finished(Result<Void, CommandError>) }

    private var result: Result<Void, CommandError>?
    private var passkey: UInt32?
    private var passkeyWanted = false
    private var outcomeWaiters: [CheckedContinuation<Outcome, Never>] = []
    private var completionWaiters: [CheckedContinuation<Result<Void, CommandError>, Never>] = []
    private var passkeyWaiters: [CheckedContinuation<UInt32?, Never>] = []

    func firstOutcome() async -> Outcome {
        if let result { return .finished(result) }
        if passkeyWanted { return .codeRequired }
        return await withCheckedContinuation { outcomeWaiters.append($0) }
    }

    func completion() async -> Result<Void, CommandError> {
        if let result { return result }
        return await withCheckedContinuation { completionWaiters.append($0) }
    }

    /// BlueZ's agent asks: wait (up to two minutes) for the user's code.
    func waitForPasskey() async -> UInt32? {
        if let passkey { return passkey }
        passkeyWanted = true
        for waiter in outcomeWaiters { waiter.resume(returning: .codeRequired) }
        outcomeWaiters.removeAll()
        return await withCheckedContinuation { passkeyWaiters.append($0) }
    }

    func provide(_ code: UInt32) {
        passkey = code
        for waiter in passkeyWaiters { waiter.resume(returning: code) }
        passkeyWaiters.removeAll()
    }

    func finish(_ outcome: Result<Void, CommandError>) {
        result = outcome
        for waiter in outcomeWaiters { waiter.resume(returning: .finished(outcome)) }
        outcomeWaiters.removeAll()
        for waiter in completionWaiters { waiter.resume(returning: outcome) }
        completionWaiters.removeAll()
        for waiter in passkeyWaiters { waiter.resume(returning: nil) }
        passkeyWaiters.removeAll()
    }
}
