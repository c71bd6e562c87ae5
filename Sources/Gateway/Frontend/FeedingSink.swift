import MQTT

/// The gateway's sink with the web interface beside the broker: every message goes to both, so a browser sees what
/// an MQTT subscriber sees, also while the broker is away.
public struct FeedingSink: MessageSink {
    let broker: any MessageSink
    let feed: BrowserFeed

    public init(broker: any MessageSink, feed: BrowserFeed) {
        self.broker = broker
        self.feed = feed
    }

    public func publish(_ message: OutgoingMessage) {
        broker.publish(message)
        feed.offer(message)
    }

    /// Offered once stored: a browser never sees a record the spool could not keep.
    public func publishDurable(_ message: OutgoingMessage,
                               whenStored: @escaping @Sendable (Result<Void, MQTTError>) -> Void) {
        broker.publishDurable(message) { [feed] result in
            if case .success = result { feed.offer(message) }
            whenStored(result)
        }
    }

    public var statistics: MQTTClientStatistics { broker.statistics }
}
