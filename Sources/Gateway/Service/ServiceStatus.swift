/// The gateway's state in the few words a service manager shows (`systemctl status`), and whether start-up is over.
/// Pure: `GatewayCore.serviceStatus()` fills it in.
public struct ServiceStatus: Sendable, Equatable {
    public enum Broker: String, Sendable {
        /// Never connected yet.
        case connecting
        case connected
        /// Connected before, away now; the client retries.
        case reconnecting
    }

    public enum BlueZ: Sendable {
        /// The bus or `org.bluez` has not answered yet.
        case unknown
        /// Its objects are loaded.
        case available
        /// Known not to be on the bus: the gateway runs and answers `ADAPTER_UNAVAILABLE` until it appears.
        case absent
    }

    public var broker: Broker
    public var bluez: BlueZ
    public var devicesConnected: Int
    public var devicesManaged: Int

    public init(broker: Broker, bluez: BlueZ, devicesConnected: Int, devicesManaged: Int) {
        self.broker = broker
        self.bluez = bluez
        self.devicesConnected = devicesConnected
        self.devicesManaged = devicesManaged
    }

    /// Start-up is over once the broker is connected and BlueZ's objects are loaded or BlueZ is known to be absent:
    /// from then on the gateway answers requests. A broker that is away at start keeps the service starting.
    public var isReady: Bool { broker == .connected && bluez != .unknown }

    /// `broker connected, 3/5 devices connected`, with BlueZ named when it is not there.
    public var summary: String {
        var parts = ["broker \(broker.rawValue)"]
        switch bluez {
        case .unknown: parts.append("waiting for BlueZ")
        case .absent: parts.append("BlueZ not available")
        case .available: break
        }
        parts.append("\(devicesConnected)/\(devicesManaged) devices connected")
        return parts.joined(separator: ", ")
    }
}

extension GatewayCore {
    /// The status now, from the MQTT client's statistics and the device manager.
    public func serviceStatus() async -> ServiceStatus {
        let statistics = sink.statistics
        let broker: ServiceStatus.Broker = statistics.connected ? .connected : statistics.connections == 0 ? .connecting : .reconnecting
        // `central` is set once BlueZClient.start() has loaded the objects or found org.bluez missing.
        let bluez: ServiceStatus.BlueZ = central.map { $0.isServiceAvailable ? .available : .absent } ?? .unknown
        var connected = 0
        var managed = 0
        if let manager {
            for device in await manager.managedDevices {
                managed += 1
                if await manager.connectionState(id: device.id) == .connected { connected += 1 }
            }
        }
        return ServiceStatus(broker: broker, bluez: bluez, devicesConnected: connected, devicesManaged: managed)
    }
}
