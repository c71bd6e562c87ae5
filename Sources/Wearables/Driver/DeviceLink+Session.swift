import BlueZ
import Logging

/// A characteristic a session follows and what to do with each of its values.
public struct NotificationHandler: Sendable {
    public let characteristic: GattCharacteristicInfo
    public let handle: @Sendable ([UInt8]) -> Void

    public init(_ characteristic: GattCharacteristicInfo, _ handle: @escaping @Sendable ([UInt8]) -> Void) {
        self.characteristic = characteristic
        self.handle = handle
    }
}

/// How long a session waits before subscribing again to a characteristic whose notifications failed or stopped
/// while the link stayed up: doubling from `first` to `longest`, so a device that wants bonding for one
/// characteristic costs a request every half minute, not a busy loop.
public struct ResubscribeDelays: Sendable {
    public var first: Duration
    public var longest: Duration

    public init(first: Duration = .seconds(1), longest: Duration = .seconds(30)) {
        self.first = first
        self.longest = longest
    }
}

extension DeviceLink {
    /// A notification subscription the device refused or ended, raised by the link for every driver.
    public static let subscriptionFailed = "subscription_failed"
    /// The events every device may raise whatever its driver, besides its driver's `events`.
    public static let commonEvents = [subscriptionFailed]

    /// The session skeleton every driver shares: subscribes to each of `notifications` in order (so nothing
    /// written afterwards can miss its answer), then runs `work` beside the flowing notifications, and returns when
    /// the device disconnects or the task is cancelled.
    ///
    /// One characteristic never stops the others. A subscription that is refused (a device that wants bonding
    /// before it notifies answers `NotPermitted`) or whose notifications end while the link stays up is reported —
    /// a `subscription_failed` event and a warning, once per characteristic and connection — and retried with
    /// `delays`; a later success is logged. Only `work` throwing ends the session early, with its error.
    public func runSession(_ notifications: [NotificationHandler], delays: ResubscribeDelays = ResubscribeDelays(),
                           afterSubscribing work: @escaping @Sendable () async throws -> Void = {}) async throws {
        var first: [NotificationSubscription?] = []
        for handler in notifications {
            do throws(CommandError) {
                first.append(try await subscribe(handler.characteristic, handler: handler.handle))
            } catch {
                first.append(nil)
                reportSubscriptionFailure(handler.characteristic, error, retryIn: delays.first)
            }
        }
        let subscriptions = first
        try await withThrowingTaskGroup(of: SessionTaskEnd.self) { group in
            for (handler, subscription) in zip(notifications, subscriptions) {
                group.addTask { [self] in
                    await follow(handler, from: subscription, delays: delays)
                    return .follower
                }
            }
            group.addTask {
                try await work()
                return .work
            }
            group.addTask { [self] in
                await waitForDisconnection()
                return .disconnected
            }
            defer { group.cancelAll() }
            while let end = try await group.next() {
                if end == .disconnected || Task.isCancelled { break }
            }
        }
    }

    private enum SessionTaskEnd: Sendable { case follower, work, disconnected }

    /// Keeps one characteristic subscribed for as long as the link is up and the task runs.
    private func follow(_ handler: NotificationHandler, from start: NotificationSubscription?, delays: ResubscribeDelays) async {
        var current = start
        var delay = delays.first
        var reported = start == nil
        while !Task.isCancelled {
            if let subscription = current {
                await subscription.ended()
                if Task.isCancelled {
                    subscription.cancel()
                    return
                }
                // The socket closes a moment before the stack reports the link down: that is the end of the
                // session, not of this characteristic.
                if await goesDown(within: .seconds(2)) { return }
                if !reported {
                    reported = true
                    reportSubscriptionFailure(handler.characteristic,
                                              CommandError(.internalError, "its notifications stopped while the link stayed up"),
                                              retryIn: delay)
                }
                current = nil
            }
            try? await time.sleep(for: delay)
            guard !Task.isCancelled, isConnected else { return }
            do throws(CommandError) {
                current = try await subscribe(handler.characteristic, handler: handler.handle)
                if reported {
                    logger.info("notifications restored", metadata: ["characteristic": "\(handler.characteristic.uuid)"])
                }
                delay = delays.first
            } catch {
                delay = min(delay * 2, delays.longest)
                if reported {
                    logger.debug("subscribing again failed", metadata: [
                        "characteristic": "\(handler.characteristic.uuid)", "error": "\(error)", "retry_in": "\(delay)"])
                } else {
                    reported = true
                    reportSubscriptionFailure(handler.characteristic, error, retryIn: delay)
                }
            }
        }
        current?.cancel()
    }

    /// The event and the log line of a characteristic whose notifications do not flow.
    private func reportSubscriptionFailure(_ characteristic: GattCharacteristicInfo, _ error: CommandError, retryIn delay: Duration) {
        logger.warning("notifications unavailable; retrying while connected", metadata: [
            "characteristic": "\(characteristic.uuid)", "error": "\(error)", "retry_in": "\(delay)"])
        emit(.event(name: Self.subscriptionFailed, timestamp: now, details: [
            "characteristic": .text(characteristic.uuid), "code": .text(error.code.rawValue), "message": .text(error.message),
            "retry_s": .number(Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18),
        ]))
    }
}
