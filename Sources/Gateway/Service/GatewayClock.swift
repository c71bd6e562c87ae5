import Foundation

/// The gateway's wall clock, injected so the in-memory test kit can fix it: state documents' `last_seen` and the
/// timestamps the gateway itself puts on messages. Batch windows and timeouts run on `ContinuousClock`.
public struct GatewayClock: Sendable {
    public let unixMilliseconds: @Sendable () -> Int64

    public init(unixMilliseconds: @escaping @Sendable () -> Int64) {
        self.unixMilliseconds = unixMilliseconds
    }

    public static let system = GatewayClock { Int64(Date().timeIntervalSince1970 * 1000) }
}
