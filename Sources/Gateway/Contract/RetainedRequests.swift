import MQTT
import Wearables

/// Retained requests are never executed: a request the broker keeps would run again at every start of the gateway
/// (a retained `device/remove` removing the device each time it is added back, a `factory_reset` waiting for the
/// next restart). Such a request is refused with `FORBIDDEN` on its response topic and cleared from the broker with
/// an empty retained message on its topic.
///
/// The clearing message comes back to the gateway's own subscription: retained and empty under MQTT 5 (the
/// gateway subscribes to requests with Retain As Published), plain and empty under 3.1.1. Neither is a request: an
/// empty retained message deletes, it asks for nothing, and a plain empty message on a topic cleared in the last
/// few seconds is the echo. A pure value; the core keeps one and publishes what it answers.
struct RetainedRequests: Sendable {
    enum Decision: Sendable, Equatable {
        /// A request: answer it as usual.
        case handle
        /// A published-retained request: refuse it, and publish this empty retained message to clear it.
        case refuseAndClear(OutgoingMessage)
        /// A deletion of a retained message, or the echo of the gateway's own: no request, no answer.
        case ignore
    }

    /// How long a plain empty message on a topic the gateway cleared counts as the echo of its clearing.
    static let echoWindow: Duration = .seconds(10)
    /// Topics cleared, with when; bounded, oldest dropped first (a storm of retained requests is cleared whole, the
    /// echoes of the oldest may then run as the empty requests they are).
    private var cleared: [(topic: String, at: ContinuousClock.Instant)] = []
    static let rememberedTopics = 1024

    mutating func decide(_ message: IncomingMessage, at now: ContinuousClock.Instant) -> Decision {
        cleared.removeAll { now - $0.at > Self.echoWindow }
        if message.payload.isEmpty {
            if message.retain { return .ignore }
            if let index = cleared.firstIndex(where: { $0.topic == message.topic }) {
                cleared.remove(at: index)
                return .ignore
            }
            return .handle
        }
        guard message.retain else { return .handle }
        if cleared.count >= Self.rememberedTopics { cleared.removeFirst() }
        cleared.append((message.topic, now))
        return .refuseAndClear(OutgoingMessage(topic: message.topic, payload: [], qos: .atLeastOnce, retain: true))
    }

    static let refusal = CommandError(
        .forbidden, "a request published with the retain flag is never executed (the broker would hand it to the "
            + "gateway again at every start); publish it without retain. The gateway cleared it from the broker")
}
