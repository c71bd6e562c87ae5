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

/// `GestureConfiguration` (read, write, notify): entries `[gesture id][0x01 on / 0x00 off]`.
public struct BoseGestureConfiguration: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var gestureID: UInt8
        public var isEnabled: Bool

        public init(gestureID: UInt8, isEnabled: Bool) {
            self.gestureID = gestureID
            self.isEnabled = isEnabled
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

    /// A state byte other than 0 or 1 is `reservedValue`: guessing "on" could stream gestures nobody asked for.
    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> BoseGestureConfiguration {
        var reader = ByteReader(bytes)
        var entries: [Entry] = []
        while !reader.isAtEnd {
            let id = try reader.readUInt8()
            let state = try reader.readUInt8()
            guard state <= 1 else { throw .reservedValue(field: "gesture 0x\(String(id, radix: 16)) state", value: Int(state)) }
            entries.append(Entry(gestureID: id, isEnabled: state == 1))
        }
        return BoseGestureConfiguration(entries: entries)
    }

    public func encode() -> [UInt8] { entries.flatMap { [$0.gestureID, $0.isEnabled ? 1 : 0] } }
}
