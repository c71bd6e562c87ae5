/// The notification state of one characteristic as BlueZ keeps it (`src/gatt-client.c`): one StartNotify
/// session per D-Bus client, or one AcquireNotify owner, never both; `Notifying` derived from the sessions.
///
/// A session is *registered* while its CCC write is in flight, *active* once notifications flow, and *dormant*
/// while the device is disconnected but its GATT objects are kept (GATT cache): BlueZ keeps such sessions and
/// re-enables them on the next connection without the client asking, and leaves `Notifying` true meanwhile.
struct NotifySessions: Sendable, Equatable {
    enum SessionState: Sendable, Equatable { case registering, active, dormant }

    enum StartOutcome: Equatable {
        /// The client already has an active session; BlueZ answers success at once.
        case alreadyActive
        /// A new session waits for the next connection (device not connected); answered success at once.
        case queuedUntilConnected
        /// A new session must enable notifications on the device first.
        case register
    }

    enum Refusal: Error, Equatable {
        case notifyAcquired, notSupported, inProgress, notConnected, noSession
    }

    private(set) var sessions: [String: SessionState] = [:]
    private(set) var acquiredBy: String?
    private(set) var notifying = false

    let canNotify: Bool
    let canIndicate: Bool

    init(canNotify: Bool, canIndicate: Bool) {
        self.canNotify = canNotify
        self.canIndicate = canIndicate
    }

    /// Whether the device side should be sending (some session or the acquired socket wants values).
    var isSubscribed: Bool { acquiredBy != nil || sessions.values.contains(.active) }

    mutating func startNotify(client: String, connected: Bool, disconnecting: Bool) throws(Refusal) -> StartOutcome {
        if disconnecting { throw .notConnected }
        if acquiredBy != nil { throw .notifyAcquired }
        guard canNotify || canIndicate else { throw .notSupported }
        if let state = sessions[client] {
            if state == .active { return .alreadyActive }
            throw .inProgress
        }
        guard connected else {
            sessions[client] = .dormant
            return .queuedUntilConnected
        }
        sessions[client] = .registering
        return .register
    }

    /// The CCC write finished; returns true when `Notifying` turned true.
    mutating func registrationSucceeded(client: String) -> Bool {
        guard sessions[client] == .registering else { return false }
        sessions[client] = .active
        return turnNotifyingOn()
    }

    mutating func registrationFailed(client: String) {
        if sessions[client] == .registering { sessions[client] = nil }
    }

    /// Returns true when `Notifying` turned false.
    mutating func stopNotify(client: String) throws(Refusal) -> Bool {
        guard sessions.removeValue(forKey: client) != nil else { throw .noSession }
        return updateNotifying()
    }

    /// The client left the bus; returns true when `Notifying` turned false.
    mutating func removeClient(_ client: String) -> Bool {
        guard sessions.removeValue(forKey: client) != nil else { return false }
        return updateNotifying()
    }

    mutating func acquireNotify(client: String, connected: Bool) throws(Refusal) {
        guard connected else { throw .notConnected }
        if acquiredBy != nil { throw .notifyAcquired }
        if !sessions.isEmpty { throw .inProgress }
        guard canNotify else { throw .notSupported }
        acquiredBy = client
    }

    /// The acquired socket closed (by the client, StopNotify or the link); true when it was acquired.
    mutating func releaseAcquired() -> Bool {
        defer { acquiredBy = nil }
        return acquiredBy != nil
    }

    /// The link dropped and the objects stay: every session goes dormant, `Notifying` unchanged (as in BlueZ).
    mutating func linkLost() {
        for client in sessions.keys { sessions[client] = .dormant }
    }

    /// The link is back: dormant sessions are re-enabled; returns true when `Notifying` turned true.
    mutating func linkRestored() -> Bool {
        guard sessions.values.contains(.dormant) else { return false }
        for client in sessions.keys where sessions[client] == .dormant { sessions[client] = .active }
        return turnNotifyingOn()
    }

    private mutating func turnNotifyingOn() -> Bool {
        guard !notifying else { return false }
        notifying = true
        return true
    }

    /// BlueZ's `update_notifying`: false once no session is enabled (registering or active) on the device;
    /// dormant sessions do not keep it true.
    private mutating func updateNotifying() -> Bool {
        guard notifying, !sessions.values.contains(where: { $0 != .dormant }) else { return false }
        notifying = false
        return true
    }
}
