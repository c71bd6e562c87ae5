import Wearables

/// A kind of simulated device a scenario can name (`kind: heart_rate_strap`) and how to make one.
public struct SimulatedDeviceKind: Sendable {
    public let name: String
    public let summary: String
    public let make: @Sendable (SimulatedDeviceConfiguration) throws(SimulatedDeviceConfigurationError) -> any SimulatedPeripheral

    public init(name: String, summary: String,
                make: @escaping @Sendable (SimulatedDeviceConfiguration) throws(SimulatedDeviceConfigurationError) -> any SimulatedPeripheral) {
        self.name = name
        self.summary = summary
        self.make = make
    }
}

/// Every simulated device kind. Each kind lives next to its codecs (`StandardGATT/Simulated/`, later one folder
/// per vendor); adding one is one line here.
public enum SimulatedDeviceCatalog {
    public static let kinds: [SimulatedDeviceKind] = [
        .heartRateStrap,
        .thermometer,
        .pulseOximeter,
        .keyFinder,
        .boseFrames,
        .empaticaE4,
        .gofitCareXc,
        .actigraphLink,
        .polarH10,
        .polarVeritySense,
        .pineTimeInfiniTime,
    ]

    public static func kind(named name: String) -> SimulatedDeviceKind? {
        kinds.first { $0.name == name }
    }
}
