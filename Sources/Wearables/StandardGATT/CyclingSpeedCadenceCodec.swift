/// A CSC Measurement (characteristic 0x2A5B; Cycling Speed and Cadence Service 1.0, "CSC Measurement"), from
/// a wheel or crank sensor.
///
/// Layout, LE: flags u8, then per flags: bit 0 wheel revolution data (cumulative wheel revolutions u32, last
/// wheel event time u16), bit 1 crank revolution data (cumulative crank revolutions u16, last crank event
/// time u16). Event times count 1/1024 s and roll over every 64 s; the counters roll over too. The sensor sends
/// counts, not speeds: `CyclingSpeedCadenceCalculator` turns successive measurements into speed and cadence.
public struct CyclingSpeedCadenceMeasurement: GATTCharacteristicValue {
    public static let characteristicUUID = GATTUUID.Characteristic.cscMeasurement

    public struct WheelRevolutions: Sendable, Hashable {
        public let cumulativeRevolutions: UInt32
        /// When the last revolution completed, 1/1024 s, modulo 65536.
        public let lastEventTime: UInt16

        public init(cumulativeRevolutions: UInt32, lastEventTime: UInt16) {
            self.cumulativeRevolutions = cumulativeRevolutions
            self.lastEventTime = lastEventTime
        }
    }

    public struct CrankRevolutions: Sendable, Hashable {
        public let cumulativeRevolutions: UInt16
        /// When the last revolution completed, 1/1024 s, modulo 65536.
        public let lastEventTime: UInt16

        public init(cumulativeRevolutions: UInt16, lastEventTime: UInt16) {
            self.cumulativeRevolutions = cumulativeRevolutions
            self.lastEventTime = lastEventTime
        }
    }

    public let wheel: WheelRevolutions?
    public let crank: CrankRevolutions?

    public init(wheel: WheelRevolutions? = nil, crank: CrankRevolutions? = nil) {
        self.wheel = wheel
        self.crank = crank
    }

    private enum Flag {
        static let wheel: UInt8 = 0x01
        static let crank: UInt8 = 0x02
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> CyclingSpeedCadenceMeasurement {
        var reader = ByteReader(bytes)
        let flags = try reader.readUInt8()
        var wheel: WheelRevolutions?
        if flags & Flag.wheel != 0 {
            wheel = WheelRevolutions(
                cumulativeRevolutions: try reader.read(UInt32.self), lastEventTime: try reader.read(UInt16.self))
        }
        var crank: CrankRevolutions?
        if flags & Flag.crank != 0 {
            crank = CrankRevolutions(
                cumulativeRevolutions: try reader.read(UInt16.self), lastEventTime: try reader.read(UInt16.self))
        }
        return CyclingSpeedCadenceMeasurement(wheel: wheel, crank: crank)
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter()
        writer.write((wheel != nil ? Flag.wheel : 0) | (crank != nil ? Flag.crank : 0))
        if let wheel {
            writer.write(wheel.cumulativeRevolutions)
            writer.write(wheel.lastEventTime)
        }
        if let crank {
            writer.write(crank.cumulativeRevolutions)
            writer.write(crank.lastEventTime)
        }
        return writer.bytes
    }
}
