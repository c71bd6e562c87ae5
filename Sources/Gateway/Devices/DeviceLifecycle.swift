/// The lifecycle of one managed device as a value: whether the gateway may connect to it, what the contract shows
/// of its link, and where a firmware update stands. `DeviceSession` feeds it what happened and carries out the
/// actions it answers; nothing here sleeps, waits or touches BlueZ, so every transition is a unit test
/// (Tests/GatewayTests/Lifecycle).
///
/// It replaces five flags the session used to keep loosely (held disconnected, held for an update, left in the
/// bootloader, wake requested, the update job's kind), whose combinations were implicit.
public struct DeviceLifecycle: Sendable, Equatable {
    /// Where a firmware update stands.
    public enum Update: Sendable, Equatable {
        case none
        /// Waits for the device to connect (kept in the device's storage across restarts).
        case scheduled
        /// Runs while the device is its application (checking, asking it to reboot into its bootloader).
        case running
        /// Runs against the bootloader: the application is not there to reconnect to until the update ends.
        case holdingDevice
    }

    /// What the session does next.
    public enum Action: Sendable, Equatable {
        /// Report the link's state (`connection` in the device's state document).
        case publish(ConnectionState)
        /// Run the driver's session on the new connection.
        case runSession
        /// Try again after the reconnect backoff (a failed attempt) or shortly (a session that ended), unless woken.
        case retry(afterBackoff: Bool)
        /// Do not reconnect until woken (held by the user or by an update).
        case waitUntilReleased
        /// End the wait now: something changed that may allow connecting.
        case wake
        /// Disconnect the device.
        case disconnect
        /// Start the update now (connected, or waiting in its bootloader), or keep it for the next connection.
        case startUpdate
        case scheduleUpdate
        /// Cancel the running update's task, or forget the scheduled one.
        case cancelUpdate
        case forgetScheduledUpdate
        /// Refuse the request: another update is scheduled (`true`) or running.
        case refuseUpdate(scheduled: Bool)
    }

    public private(set) var connection = ConnectionState.disconnected
    public private(set) var update = Update.none
    /// The user sent `disconnect`: stay away until `connect` or a restart.
    public private(set) var heldByUser = false
    /// An update put the device into its bootloader and ended without installing: its application may be gone,
    /// so the next update goes to the bootloader directly. Cleared when the application connects again.
    public private(set) var inBootloader = false
    public private(set) var stopped = false

    public init() {}

    /// Whether the session may try to connect now.
    public var mayConnect: Bool { !stopped && !heldByUser && update != .holdingDevice }

    /// Whether an update request can start at once rather than wait for the device.
    public var canUpdateNow: Bool { connection == .connected || inBootloader }

    // MARK: The link

    /// An attempt begins.
    public mutating func connecting() -> [Action] { publish(.connecting) }

    /// The device connected and its services resolved.
    public mutating func connected() -> [Action] {
        inBootloader = false
        var actions = publish(.connected) + [.runSession]
        if update == .scheduled {
            update = .running
            actions.append(.startUpdate)
        }
        return actions
    }

    /// An attempt failed.
    public mutating func connectFailed() -> [Action] { publish(.disconnected) + [next(afterBackoff: true)] }

    /// The link of a running session ended.
    public mutating func disconnected() -> [Action] { publish(.disconnected) + [next(afterBackoff: false)] }

    /// After a wait: whether to connect now (`[]`) or wait for a release.
    public func afterWaiting() -> [Action] { mayConnect ? [] : [.waitUntilReleased] }

    // MARK: The user's commands

    /// `connect`: no longer held by the user; try at once.
    public mutating func connectRequested() -> [Action] {
        heldByUser = false
        return [.wake]
    }

    /// `disconnect`: held until `connect`; the link goes down.
    public mutating func disconnectRequested() -> [Action] {
        heldByUser = true
        return (connection == .connected ? publish(.disconnecting) : []) + [.disconnect]
    }

    /// The disconnect failed: nothing changed after all.
    public mutating func disconnectFailed(wasConnected: Bool) -> [Action] {
        heldByUser = false
        return wasConnected ? publish(.connected) : []
    }

    // MARK: Firmware updates

    /// `dfu`: start now, keep for the next connection, or refuse while another waits or runs.
    public mutating func updateRequested() -> [Action] {
        switch update {
        case .scheduled: return [.refuseUpdate(scheduled: true)]
        case .running, .holdingDevice: return [.refuseUpdate(scheduled: false)]
        case .none:
            if canUpdateNow {
                update = .running
                return [.startUpdate]
            }
            update = .scheduled
            return [.scheduleUpdate]
        }
    }

    /// An update scheduled before a restart of the gateway was read back from storage.
    public mutating func scheduledUpdateRestored() {
        if update == .none { update = .scheduled }
    }

    /// `dfu/cancel`.
    public mutating func cancelRequested() -> [Action] {
        switch update {
        case .none: return []
        case .scheduled:
            update = .none
            return [.forgetScheduledUpdate]
        case .running, .holdingDevice: return [.cancelUpdate]
        }
    }

    /// The update took the device: its bootloader is (or is about to be) on the air instead of the application.
    public mutating func updateHoldsDevice() {
        if update == .running { update = .holdingDevice }
    }

    /// The application agreed to reboot into its bootloader.
    public mutating func enteredBootloader() { inBootloader = true }

    /// The gateway was restarted (or killed) while an update held the device in its bootloader, as the state
    /// folder remembers: the next update goes to the bootloader directly, as it would have before the restart.
    public mutating func bootloaderRestored() {
        if connection != .connected { inBootloader = true }
    }

    /// The update let the device go: installed (the application comes back with the new image) or not
    /// (cancelled, refused, given up: the device may still be in its bootloader). The session may reconnect; the
    /// update is still under way until `updateEnded` (it waits for the application to report its firmware).
    public mutating func updateReleasesDevice(installed: Bool) -> [Action] {
        if update == .holdingDevice { update = .running }
        if installed { inBootloader = false }
        return [.wake]
    }

    /// The update is over; another may be requested.
    public mutating func updateEnded() {
        if update == .running || update == .holdingDevice { update = .none }
    }

    // MARK: Stopping

    /// The gateway lets the device go (shutdown, `device/remove`).
    public mutating func stopRequested() -> [Action] {
        stopped = true
        var actions: [Action] = []
        switch update {
        case .running, .holdingDevice: actions.append(.cancelUpdate)
        case .scheduled, .none: break
        }
        update = .none
        if connection == .connected { actions += publish(.disconnecting) + [.disconnect] }
        return actions + publish(.disconnected)
    }

    // MARK: Inside

    private mutating func publish(_ state: ConnectionState) -> [Action] {
        guard state != connection else { return [] }
        connection = state
        return [.publish(state)]
    }

    private func next(afterBackoff: Bool) -> Action {
        mayConnect ? .retry(afterBackoff: afterBackoff) : .waitUntilReleased
    }
}
