/// `WearableDeviceInformation` (read, notify): the sensor service's version, the product, which sensors and
/// gestures exist, the transport budget and the device status bits. 19 bytes, big-endian.
///
/// Trailing bytes beyond the 19 are ignored: later firmware may append fields, and a reader that refuses them
/// would lose a device over nothing.
public struct BoseDeviceInformation: Sendable, Equatable {
    /// Bits of `deviceStatus`, as the SDK's `DeviceStatus` names them.
    public struct Status: OptionSet, Sendable, Hashable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        public static let pairingEnabled = Status(rawValue: 1 << 0)
        public static let secureBLEPairingRequired = Status(rawValue: 1 << 1)
        public static let alreadyPairedToClient = Status(rawValue: 1 << 2)
        public static let sensorServiceSuspended = Status(rawValue: 1 << 3)

        /// snake_case names for the device state, every known bit (true or false).
        public var fields: [String: DeviceValue] {
            [
                "pairing_enabled": .flag(contains(.pairingEnabled)),
                "secure_pairing_required": .flag(contains(.secureBLEPairingRequired)),
                "already_paired_to_client": .flag(contains(.alreadyPairedToClient)),
                "sensor_service_suspended": .flag(contains(.sensorServiceSuspended)),
            ]
        }
    }

    public var majorVersion: UInt8
    public var minorVersion: UInt8
    public var productID: UInt16
    public var variant: UInt8
    /// Bit `n` set: sensor id `n` exists.
    public var availableSensorsMask: UInt32
    /// Bit `n` set: gesture id `0x80 + n` exists.
    public var availableGesturesMask: UInt32
    public var transmissionPeriodMilliseconds: UInt8
    public var maxPayloadPerTransmissionPeriod: UInt16
    public var maxActiveSensors: UInt8
    public var status: Status

    public static let length = 19

    public init(majorVersion: UInt8, minorVersion: UInt8, productID: UInt16, variant: UInt8,
                availableSensorsMask: UInt32, availableGesturesMask: UInt32, transmissionPeriodMilliseconds: UInt8,
                maxPayloadPerTransmissionPeriod: UInt16, maxActiveSensors: UInt8, status: Status) {
        self.majorVersion = majorVersion
        self.minorVersion = minorVersion
        self.productID = productID
        self.variant = variant
        self.availableSensorsMask = availableSensorsMask
        self.availableGesturesMask = availableGesturesMask
        self.transmissionPeriodMilliseconds = transmissionPeriodMilliseconds
        self.maxPayloadPerTransmissionPeriod = maxPayloadPerTransmissionPeriod
        self.maxActiveSensors = maxActiveSensors
        self.status = status
    }

    /// The known sensors whose bit is set; unknown bits (future sensors) are left out.
    public var availableSensors: [BoseSensor] {
        BoseSensor.allCases.filter { availableSensorsMask & (1 << UInt32($0.rawValue)) != 0 }
    }

    public var availableGestures: [BoseGesture] {
        BoseGesture.allCases.filter { availableGesturesMask & $0.maskBit != 0 }
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> BoseDeviceInformation {
        var reader = ByteReader(bytes)
        return BoseDeviceInformation(
            majorVersion: try reader.readUInt8(), minorVersion: try reader.readUInt8(),
            productID: try reader.read(UInt16.self, byteOrder: .bigEndian), variant: try reader.readUInt8(),
            availableSensorsMask: try reader.read(UInt32.self, byteOrder: .bigEndian),
            availableGesturesMask: try reader.read(UInt32.self, byteOrder: .bigEndian),
            transmissionPeriodMilliseconds: try reader.readUInt8(),
            maxPayloadPerTransmissionPeriod: try reader.read(UInt16.self, byteOrder: .bigEndian),
            maxActiveSensors: try reader.readUInt8(),
            status: Status(rawValue: try reader.read(UInt16.self, byteOrder: .bigEndian)))
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(majorVersion)
        writer.write(minorVersion)
        writer.write(productID, byteOrder: .bigEndian)
        writer.write(variant)
        writer.write(availableSensorsMask, byteOrder: .bigEndian)
        writer.write(availableGesturesMask, byteOrder: .bigEndian)
        writer.write(transmissionPeriodMilliseconds)
        writer.write(maxPayloadPerTransmissionPeriod, byteOrder: .bigEndian)
        writer.write(maxActiveSensors)
        writer.write(status.rawValue, byteOrder: .bigEndian)
        return writer.bytes
    }
}
