import Wearables

/// The answer to `bridge/request/health_check`: healthy when the broker link is up, the Bluetooth stack is
/// reachable with a powered adapter, and every managed device is connected; otherwise `problems` says what is not.
/// (The request itself arrives over the broker, so an answer with `mqtt: false` is rare but possible: the link
/// may drop while it is handled.)
public struct HealthCheck: Sendable, Equatable {
    public var mqttConnected: Bool
    public var bluetoothAvailable: Bool
    public var devicesManaged: Int
    public var devicesConnected: Int
    public var uptimeSeconds: Int64

    public init(mqttConnected: Bool, bluetoothAvailable: Bool, devicesManaged: Int, devicesConnected: Int, uptimeSeconds: Int64) {
        self.mqttConnected = mqttConnected
        self.bluetoothAvailable = bluetoothAvailable
        self.devicesManaged = devicesManaged
        self.devicesConnected = devicesConnected
        self.uptimeSeconds = uptimeSeconds
    }

    public var problems: [String] {
        var problems: [String] = []
        if !mqttConnected { problems.append("the MQTT broker is not connected") }
        if !bluetoothAvailable { problems.append("no powered Bluetooth adapter is reachable") }
        if devicesConnected < devicesManaged {
            problems.append("\(devicesManaged - devicesConnected) of \(devicesManaged) devices are not connected")
        }
        return problems
    }

    public var healthy: Bool { problems.isEmpty }

    public var object: [String: DeviceValue] {
        ["healthy": .flag(healthy), "problems": .list(problems.map(DeviceValue.text)),
         "mqtt": .flag(mqttConnected), "bluetooth": .flag(bluetoothAvailable),
         "devices": .object(["managed": .integer(Int64(devicesManaged)), "connected": .integer(Int64(devicesConnected))]),
         "uptime_s": .integer(uptimeSeconds)]
    }
}
