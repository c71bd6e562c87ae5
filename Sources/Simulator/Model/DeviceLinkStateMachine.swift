/// The LE link to one device as bluetoothd sees it, and the decisions Connect and Disconnect make on it
/// (`dev_connect`, `device_connect_le`, `device_request_disconnect` and `device_remove_connection` in
/// `src/device.c`). Pure: the daemon turns decisions into timers, signals and replies.
///
/// Each connection attempt and each established link gets a number, so a timer that fires for an attempt or a
/// link that has since ended is recognised and ignored.
struct DeviceLinkStateMachine: Sendable, Equatable {
    enum State: Sendable, Equatable {
        case disconnected
        case connecting(attempt: Int)
        case connected(link: Int)
        /// Disconnect was called; BlueZ drops the link when its disconnect timer fires.
        case disconnecting(link: Int)
    }

    enum ConnectDecision: Equatable {
        /// Already connected: BlueZ answers success at once.
        case alreadyConnected
        /// A connection attempt is under way: `device_connect_le` answers -EALREADY, reported as Failed.
        case alreadyConnecting
        case start(attempt: Int)
    }

    enum DisconnectDecision: Equatable {
        /// Not connected: answered at once, successfully (BlueZ does not answer NotConnected here).
        case notConnected
        /// A pending Connect is answered Failed "Cancelled"; the Disconnect succeeds at once.
        case cancelAttempt(attempt: Int)
        /// The link goes when the disconnect timer fires; the Disconnect is answered then.
        case startDisconnect(link: Int)
        /// Already going down: this Disconnect is answered with the first.
        case joinDisconnect(link: Int)
    }

    private(set) var state: State = .disconnected
    private var counter = 0

    var isConnected: Bool {
        switch state {
        case .connected, .disconnecting: true
        default: false
        }
    }

    var isDisconnecting: Bool { if case .disconnecting = state { true } else { false } }

    var currentLink: Int? {
        switch state {
        case .connected(let link), .disconnecting(let link): link
        default: nil
        }
    }

    mutating func connect() -> ConnectDecision {
        switch state {
        case .connected, .disconnecting: return .alreadyConnected
        case .connecting: return .alreadyConnecting
        case .disconnected:
            counter += 1
            state = .connecting(attempt: counter)
            return .start(attempt: counter)
        }
    }

    /// The attempt succeeded; nil when it is no longer the current one.
    mutating func attemptSucceeded(_ attempt: Int) -> Int? {
        guard state == .connecting(attempt: attempt) else { return nil }
        counter += 1
        state = .connected(link: counter)
        return counter
    }

    /// The attempt failed; false when it is no longer the current one.
    mutating func attemptFailed(_ attempt: Int) -> Bool {
        guard state == .connecting(attempt: attempt) else { return false }
        state = .disconnected
        return true
    }

    mutating func disconnect() -> DisconnectDecision {
        switch state {
        case .disconnected: return .notConnected
        case .connecting(let attempt):
            state = .disconnected
            return .cancelAttempt(attempt: attempt)
        case .connected(let link):
            state = .disconnecting(link: link)
            return .startDisconnect(link: link)
        case .disconnecting(let link):
            return .joinDisconnect(link: link)
        }
    }

    /// The link went (dropped, powered off, or the disconnect timer fired); returns the link that ended, or nil
    /// when `link` is not the current one. A pending attempt is abandoned too (`attempt` of the result).
    mutating func linkLost(_ link: Int? = nil) -> (link: Int?, attempt: Int?) {
        switch state {
        case .connected(let current), .disconnecting(let current):
            guard link == nil || link == current else { return (nil, nil) }
            state = .disconnected
            return (current, nil)
        case .connecting(let attempt):
            guard link == nil else { return (nil, nil) }
            state = .disconnected
            return (nil, attempt)
        case .disconnected:
            return (nil, nil)
        }
    }
}
