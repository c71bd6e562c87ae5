/// Faults injected into one simulated device (or, with no device, the adapter), by the scenario's timeline or the
/// control interface: they reproduce what BlueZ users meet in the field.
struct DeviceFaults: Sendable {
    /// The next this many Connect attempts fail with `refusalError` after the usual connection delay.
    private var refusalCount = 0
    private var refusalError = BlueZErrorReply.leConnectionAbortByLocal
    /// Added before every answer of this device's (or the adapter's) methods: a slow, busy controller.
    var latency: Duration = .zero
    /// One-shot failures by method name (`Connect`, `ReadValue`, `StartDiscovery`…).
    private var failNext: [String: BlueZErrorReply] = [:]

    mutating func refuseConnects(_ count: Int, with error: BlueZErrorReply) {
        refusalCount = count
        refusalError = error
    }

    mutating func failNextCall(of method: String, with error: BlueZErrorReply) { failNext[method] = error }

    /// The failure to answer this call of `method` with, consuming it.
    mutating func takeFailure(for method: String) -> BlueZErrorReply? { failNext.removeValue(forKey: method) }

    /// The error this connection attempt fails with, consuming one refusal.
    mutating func takeConnectRefusal() -> BlueZErrorReply? {
        guard refusalCount > 0 else { return nil }
        refusalCount -= 1
        return refusalError
    }
}
