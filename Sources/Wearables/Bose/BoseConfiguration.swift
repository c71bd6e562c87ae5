/// `SensorConfiguration` (read, write, notify): 3-byte entries `[sensor id][period ms u16 BE]`, period 0 for a
/// disabled sensor. The device lists every sensor it has; a write lists every sensor too, since the device
/// replaces its whole configuration. All enabled sensors share one period.
public struct BoseSensorConfiguration: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var sensorID: UInt8
        public var periodMilliseconds: UInt16

        public init(sensorID: UInt8, periodMilliseconds: UInt16) {
            self.sensorID = sensorID
            self.periodMilliseconds = periodMilliseconds
        }
    }

    /// In wire order; ids this code does not know are kept so a write-back leaves them as they were.
    public var entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    /// Every sensor listed, all disabled.
    public init(disabling sensorIDs: [UInt8]) {
        entries = sensorIDs.map { Entry(sensorID: $0, periodMilliseconds: 0) }
    }

    /// The period of `sensor`, 0 when disabled or not listed.
    public func period(of sensor: BoseSensor) -> UInt16 {
        entries.first { $0.sensorID == sensor.rawValue }?.periodMilliseconds ?? 0
    }

    public var enabledSensors: [BoseSensor] {
        entries.filter { $0.periodMilliseconds != 0 }.compactMap { BoseSensor(rawValue: $0.sensorID) }
    }

    /// Sets one sensor's period, adding the entry when the device did not list it.
    public mutating func setPeriod(_ period: UInt16, for sensor: BoseSensor) {
        if let index = entries.firstIndex(where: { $0.sensorID == sensor.rawValue }) {
            entries[index].periodMilliseconds = period
        } else {
            entries.append(Entry(sensorID: sensor.rawValue, periodMilliseconds: period))
        }
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> BoseSensorConfiguration {
        var reader = ByteReader(bytes)
        var entries: [Entry] = []
        while !reader.isAtEnd {
            entries.append(Entry(sensorID: try reader.readUInt8(),
                                 periodMilliseconds: try reader.read(UInt16.self, byteOrder: .bigEndian)))
        }
        return BoseSensorConfiguration(entries: entries)
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter()
        for entry in entries {
            writer.write(entry.sensorID)
            writer.write(entry.periodMilliseconds, byteOrder: .bigEndian)
        }
        return writer.bytes
    }
}

/// `GestureInformation` (read): 2-byte entries `[gesture id][configuration length]`.
public struct BoseGestureInformation: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var gestureID: UInt8
        public var configurationLength: UInt8

        public init(gestureID: UInt8, configurationLength: UInt8) {
            self.gestureID = gestureID
            self.configurationLength = configurationLength
        }

        public var gesture: BoseGesture? { BoseGesture(rawValue: gestureID) }
    }

    public var entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    public var gestures: [BoseGesture] { entries.compactMap(\.gesture) }

    /// How many configuration bytes follow `gestureID` in a `GestureConfiguration` entry; nil for an id not listed.
    public func configurationLength(of gestureID: UInt8) -> Int? {
        entries.first { $0.gestureID == gestureID }.map { Int($0.configurationLength) }
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> BoseGestureInformation {
        var reader = ByteReader(bytes)
        var entries: [Entry] = []
        while !reader.isAtEnd {
            entries.append(Entry(gestureID: try reader.readUInt8(), configurationLength: try reader.readUInt8()))
        }
        return BoseGestureInformation(entries: entries)
    }

    public func encode() -> [UInt8] { entries.flatMap { [$0.gestureID, $0.configurationLength] } }
}

/// `GestureConfiguration` (read, write, notify): entries `[gesture id][configuration]`, the configuration as many
/// bytes as `GestureInformation` gives for that gesture (one for the four gestures the SDK knows), bit 0 of its first
/// byte "enabled".
///
/// As Bose's SDK (`GestureConfiguration.swift` in the BoseWearable iOS SDK vendored by `umarqattan/Vudu` under
/// `Pods/BoseWearable/Modules/BoseWearable/Source/WearableSensorService/`): `init?(payload:metadata:)` frames each
/// entry by `configurationPayloadLength(forGestureId:)` from GestureInformation, and `IsEnabledEntry` reads
/// `contents & 0x01 == 0x01` and writes the state byte as 0x01 or 0x00.
public struct BoseGestureConfiguration: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var gestureID: UInt8
        /// The entry's bytes after the id, as long as `GestureInformation` says, kept as read so a write-back
        /// keeps the framing (and the bytes after the first, whose meaning no source gives).
        public var configuration: [UInt8]

        public init(gestureID: UInt8, configuration: [UInt8]) {
            self.gestureID = gestureID
            self.configuration = configuration
        }

        /// A one-byte configuration, the layout of every known gesture.
        public init(gestureID: UInt8, isEnabled: Bool) {
            self.init(gestureID: gestureID, configuration: [isEnabled ? 0x01 : 0x00])
        }

        /// Bit 0 of the first configuration byte; the other bits are not read (the SDK's `contents & 0x01`).
        /// Setting it writes the whole first byte as 0x01 or 0x00, as the SDK's `IsEnabledEntry.data` does, and
        /// creates that byte for an empty configuration.
        public var isEnabled: Bool {
            get { (configuration.first ?? 0) & 0x01 == 0x01 }
            set {
                if configuration.isEmpty { configuration = [newValue ? 0x01 : 0x00] } else { configuration[0] = newValue ? 0x01 : 0x00 }
            }
        }
    }

    public var entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    public init(disabling gestureIDs: [UInt8]) {
        entries = gestureIDs.map { Entry(gestureID: $0, isEnabled: false) }
    }

    public func isEnabled(_ gesture: BoseGesture) -> Bool {
        entries.first { $0.gestureID == gesture.rawValue }?.isEnabled ?? false
    }

    public var enabledGestures: [BoseGesture] {
        entries.filter(\.isEnabled).compactMap { BoseGesture(rawValue: $0.gestureID) }
    }

    public mutating func set(_ gesture: BoseGesture, enabled: Bool) {
        if let index = entries.firstIndex(where: { $0.gestureID == gesture.rawValue }) {
            entries[index].isEnabled = enabled
        } else {
            entries.append(Entry(gestureID: gesture.rawValue, isEnabled: enabled))
        }
    }

    /// Frames every entry by its gesture's configuration length in `information`. Refused: an id `information`
    /// does not list (`unknownIdentifier`: the length of its entry, and so of every later one, is unknown) and an
    /// entry cut short (`truncated`). The SDK stops silently at either and keeps the entries before; a
    /// configuration is the state the gateway compares its writes against, so a partial one is not taken for
    /// the whole. Any state byte is accepted: only bit 0 counts.
    public static func decode(_ bytes: [UInt8], information: BoseGestureInformation)
        throws(GATTCodecError) -> BoseGestureConfiguration
    {
        var reader = ByteReader(bytes)
        var entries: [Entry] = []
        while !reader.isAtEnd {
            let id = try reader.readUInt8()
            guard let length = information.configurationLength(of: id) else {
                throw .unknownIdentifier(field: "gesture id", value: Int(id))
            }
            entries.append(Entry(gestureID: id, configuration: Array(try reader.readBytes(length))))
        }
        return BoseGestureConfiguration(entries: entries)
    }

    public func encode() -> [UInt8] { entries.flatMap { [$0.gestureID] + $0.configuration } }
}
