/// What one gateway heard of the site's devices during one report interval
/// (`<base>/bridge/site/sightings/<gateway>`).
public struct SightingReport: Sendable, Equatable {
    public struct Sighting: Sendable, Equatable {
        /// Mean RSSI of the advertisements heard in the interval, or the last level heard when `heard` is 0.
        public var rssi: Double
        /// How many advertisements the mean is over; 0 when the device was not heard (a connected device often
        /// stops advertising).
        public var heard: Int
        /// The reporting gateway holds a link to the device.
        public var connected: Bool
        /// The reporting gateway's link to the device dropped since its last report.
        public var lost: Bool

        public init(rssi: Double, heard: Int = 1, connected: Bool = false, lost: Bool = false) {
            self.rssi = rssi
            self.heard = heard
            self.connected = connected
            self.lost = lost
        }
    }

    public var gateway: String
    public var devices: [String: Sighting]

    public init(gateway: String, devices: [String: Sighting]) {
        self.gateway = gateway
        self.devices = devices
    }
}
