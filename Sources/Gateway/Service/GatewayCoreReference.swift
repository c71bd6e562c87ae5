import Synchronization

/// A weak reference to the core, for an extension the core owns.
struct WeakGatewayCore: Sendable {
    weak var value: GatewayCore?
}

/// A weak reference to the core that can be made before the core exists, for what the core builds in its `init`.
final class GatewayCoreReference: Sendable {
    private let reference = Mutex(WeakGatewayCore())
    var core: GatewayCore? {
        get { reference.withLock { $0.value } }
        set { reference.withLock { $0.value = newValue } }
    }
}
