import Testing

@testable import Wearables
@testable import SimulatedWearables

/// Byte vectors built from the layouts in docs/protocols/e4.md, and what malformed notifications do.
@Suite("E4 codecs")
struct EmpaticaCodecTests {
    // MARK: UUIDs

    @Test("UUID strings are the 16-bit numbers on the Bluetooth Base UUID, lower case")
    func uuids() {
        let pairs: [(String, UInt16)] = [
            (E4UUID.Service.sensors, 0x3EA0), (E4UUID.Characteristic.bvp, 0x3EA1),
            (E4UUID.Characteristic.accelerometer, 0x3EA3), (E4UUID.Characteristic.temperature, 0x3EA6),
            (E4UUID.Characteristic.eda, 0x3EA8), (E4UUID.Service.status, 0x3EB0),
            (E4UUID.Characteristic.control, 0x3EB2), (E4UUID.Characteristic.battery, 0x3EB3),
            (E4UUID.Service.command, 0x3E70), (E4UUID.Characteristic.command, 0x3E71),
        ]
        for (string, short) in pairs {
            #expect(string == GATTUUID.string(for: short))
            #expect(GATTUUID.shortForm(of: string) == short)
        }
        #expect(E4UUID.Characteristic.bvp == "00003ea1-0000-1000-8000-00805f9b34fb")
        #expect(E4UUID.Short.command == 0x3E71)
        #expect(E4Stream.allCases.map(\.characteristicUUID) == [0x3EA1, 0x3EA3, 0x3EA8, 0x3EA6])
    }

    // MARK: Start command

    @Test("the start command is 0x01 then the Unix seconds, little-endian")
    func startCommand() throws {
        try expectCodes(E4StartCommand(unixSeconds: 1_700_000_000), as: [0x01, 0x00, 0xF1, 0x53, 0x65])
        #expect(try E4StartCommand(unixMilliseconds: 1_700_000_000_999).unixSeconds == 1_700_000_000)
        #expect(throws: GATTCodecError.outOfRange(field: "E4 start time", value: -1)) {
            try E4StartCommand(unixMilliseconds: -1)
        }
        #expect(throws: GATTCodecError.outOfRange(field: "E4 start time", value: 4_294_967_296)) {
            try E4StartCommand(unixMilliseconds: 4_294_967_296_000)
        }
        #expect(throws: GATTCodecError.reservedValue(field: "E4 command opcode", value: 2)) {
            try E4StartCommand.decode([0x02, 0x00, 0xF1, 0x53, 0x65])
        }
        expectEveryPrefixTruncated(E4StartCommand.self, [0x01, 0x00, 0xF1, 0x53, 0x65])
        expectTooLong(E4StartCommand.self, [0x01, 0x00, 0xF1, 0x53, 0x65], field: "E4 start command length")
    }

    // MARK: Accelerometer

    @Test("accelerometer: six signed x, y, z triplets, 64 counts per g")
    func accelerometer() throws {
        let bytes: [UInt8] = [0x00, 0x40, 0xC0, 0x7F, 0x80, 0x01] + [UInt8](repeating: 0x20, count: 12)
        let packet = try E4AccelerometerPacket.decode(bytes)
        #expect(packet.samples[0] == .init(x: 0, y: 64, z: -64))
        #expect(packet.samples[1] == .init(x: 127, y: -128, z: 1))
        #expect(packet.samples[5] == .init(x: 32, y: 32, z: 32))
        #expect(packet.samples.count == 6 && packet.trailingBytes.isEmpty)
        let first = packet.samples[0].gravities
        #expect(first.x == 0 && first.y == 1 && first.z == -1)
        #expect(packet.samples[1].gravities.y == -2)
        #expect(packet.samples[0].metresPerSecondSquared.y == 9.80665)
        #expect(packet.encode() == bytes)
        #expect(throws: GATTCodecError.outOfRange(field: "E4 accelerometer sample count", value: 5)) {
            try E4AccelerometerPacket(samples: Array(packet.samples.prefix(5)))
        }
        #expect(throws: GATTCodecError.outOfRange(field: "E4 accelerometer trailing length", value: 3)) {
            try E4AccelerometerPacket(samples: packet.samples, trailingBytes: [1, 2, 3])
        }
        expectEveryPrefixTruncated(E4AccelerometerPacket.self, bytes)
        expectEveryValueRoundTrips(E4AccelerometerPacket.self, length: 18)
    }

    /// Both public decoders read every whole triplet and stop when fewer than three bytes are left:
    /// `mountainaught/e4-python-server` `main.py` `StreamProcessor.__handle_acc` (`while i + 3 <= len(data)`, line
    /// 359 at commit 3409c1ab) and Gadgetbridge-EmpaticaE4 `EmpaticaE4DeviceSupport.onCharacteristicChanged`
    /// (`while (buffer.remaining() >= 3)`, line 112 at commit 52089a52). These vectors are what they would read.
    @Test("accelerometer: 20 bytes are six triplets and a kept 2-byte tail; 21 are seven, 24 eight; under 18 truncated",
          arguments: [
              (20, 6, 2), (21, 7, 0), (22, 7, 1), (23, 7, 2), (24, 8, 0), (19, 6, 1), (18, 6, 0), (30, 10, 0), (244, 81, 1),
          ] as [(Int, Int, Int)])
    func accelerometerWholeTriplets(length: Int, triplets: Int, tail: Int) throws {
        // Triplet n is (n, −n, 2n) — distinct, so an off-by-one in the framing shows; the tail is 0xEE, 0xEF.
        var bytes: [UInt8] = []
        for n in 0..<triplets { bytes += [UInt8(n), UInt8(bitPattern: Int8(truncatingIfNeeded: -n)), UInt8(truncatingIfNeeded: 2 * n)] }
        bytes += [0xEE, 0xEF].prefix(tail)
        #expect(bytes.count == length)
        let packet = try E4AccelerometerPacket.decode(bytes)
        #expect(packet.samples == (0..<triplets).map {
            .init(x: Int8(truncatingIfNeeded: $0), y: Int8(truncatingIfNeeded: -$0), z: Int8(truncatingIfNeeded: 2 * $0))
        })
        #expect(packet.trailingBytes == Array([0xEE, 0xEF].prefix(tail)))
        #expect(packet.encode() == bytes, "the tail is written back as it came")
        #expect(try E4AccelerometerPacket.decode(packet.encode()) == packet)
    }

    @Test("accelerometer: every value of 18…26 bytes decodes its whole triplets; every shorter one is truncated")
    func accelerometerLengths() throws {
        let base = (0..<26).map { UInt8($0 * 7 + 1) }
        for length in 0...26 {
            let bytes = Array(base.prefix(length))
            if length < 18 {
                // Read byte by byte: the missing one is the (length + 1)-th.
                #expect(throws: GATTCodecError.truncated(expected: length + 1, actual: length)) {
                    try E4AccelerometerPacket.decode(bytes)
                }
            } else {
                let packet = try E4AccelerometerPacket.decode(bytes)
                #expect(packet.samples.count == length / 3 && packet.trailingBytes.count == length % 3, "\(length) bytes")
            }
        }
        expectEveryValueRoundTrips(E4AccelerometerPacket.self, length: 20)
        expectEveryValueRoundTrips(E4AccelerometerPacket.self, length: 21)
    }

    // MARK: EDA

    @Test("EDA: six 24-bit big-endian resistances, a big-endian counter; µS = 10⁶ / raw, none for raw 0")
    func eda() throws {
        let bytes: [UInt8] = [
            0x00, 0x00, 0x01, 0x0F, 0x42, 0x40, 0x07, 0xA1, 0x20,
            0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x12, 0x34, 0x56,
            0x01, 0x02,
        ]
        let packet = try E4EDAPacket(rawSamples: [1, 1_000_000, 500_000, 0xFF_FFFF, 0, 0x12_3456], counter: 0x0102)
        try expectCodes(packet, as: bytes)
        #expect(packet.microsiemens == [1_000_000, 1, 2, 1_000_000 / 16_777_215, nil, 1_000_000 / 1_193_046])
        #expect(E4EDAPacket.raw(ofMicrosiemens: 2) == 500_000)
        #expect(E4EDAPacket.raw(ofMicrosiemens: 0) == 0xFF_FFFF)
        #expect(E4EDAPacket.raw(ofMicrosiemens: -1) == 0xFF_FFFF)
        #expect(E4EDAPacket.raw(ofMicrosiemens: 1e12) == 1)
        #expect(throws: GATTCodecError.outOfRange(field: "E4 EDA sample", value: 0x100_0000)) {
            try E4EDAPacket(rawSamples: [0, 0, 0x100_0000, 0, 0, 0], counter: 0)
        }
        #expect(throws: GATTCodecError.outOfRange(field: "E4 EDA sample count", value: 7)) {
            try E4EDAPacket(rawSamples: [UInt32](repeating: 1, count: 7), counter: 0)
        }
        expectEveryPrefixTruncated(E4EDAPacket.self, bytes)
        expectTooLong(E4EDAPacket.self, bytes, field: "E4 EDA packet length")
        expectEveryValueRoundTrips(E4EDAPacket.self, length: 20)
    }

    // MARK: Temperature

    @Test("temperature: four u16 little-endian samples and four metadata bytes; °C = raw × 0.02 − 276.0 + 0.46")
    func temperature() throws {
        // 15427 × 0.02 − 276.0 + 0.46 = 33.0 °C
        let bytes: [UInt8] = [0x43, 0x3C, 0x44, 0x3C, 0x00, 0x00, 0xFF, 0xFF, 0xDE, 0xAD, 0xBE, 0xEF]
        let packet = try E4TemperaturePacket(rawSamples: [15427, 15428, 0, 65535], metadata: [0xDE, 0xAD, 0xBE, 0xEF])
        try expectCodes(packet, as: bytes)
        let celsius = packet.celsius
        #expect(abs(celsius[0] - 33.0) < 1e-9)
        #expect(abs(celsius[1] - 33.02) < 1e-9)
        #expect(abs(celsius[2] - -275.54) < 1e-9)
        #expect(E4TemperaturePacket.raw(ofCelsius: 33.0) == 15427)
        #expect(E4TemperaturePacket.raw(ofCelsius: -300) == 0)
        #expect(E4TemperaturePacket.raw(ofCelsius: .nan) == 0)
        #expect(throws: GATTCodecError.outOfRange(field: "E4 temperature metadata length", value: 3)) {
            try E4TemperaturePacket(rawSamples: [1, 2, 3, 4], metadata: [1, 2, 3])
        }
        expectEveryPrefixTruncated(E4TemperaturePacket.self, bytes)
        expectTooLong(E4TemperaturePacket.self, bytes, field: "E4 temperature packet length")
        expectEveryValueRoundTrips(E4TemperaturePacket.self, length: 12)
    }

    // MARK: BVP

    @Test("BVP: the layout's first field is the top 7 bits of byte 0, the trailer the low 6 bits of byte 19")
    func bvpLayout() throws {
        let zero = try E4BVPPacket.Delta(green: 0, red: 0)
        let rest = [E4BVPPacket.Delta](repeating: zero, count: 10)
        // green₀ = +1 → 0000001 → byte 0 = 0b0000_0010
        try expectCodes(E4BVPPacket(deltas: [E4BVPPacket.Delta(green: 1, red: 0)] + rest),
                        as: [0x02] + [UInt8](repeating: 0, count: 19))
        // red₀ = −1 → bits 7…13 set → byte 0 = 0b0000_0001, byte 1 = 0b1111_1100
        try expectCodes(E4BVPPacket(deltas: [E4BVPPacket.Delta(green: 0, red: -1)] + rest),
                        as: [0x01, 0xFC] + [UInt8](repeating: 0, count: 18))
        // red₁₀ = −64 → bits 147…153 = 1000000 → byte 18 bit 4; trailer 42 = 101010 → byte 19's low six bits
        try expectCodes(E4BVPPacket(deltas: [E4BVPPacket.Delta](repeating: zero, count: 10)
                                      + [E4BVPPacket.Delta(green: 0, red: -64)], trailer: 42),
                        as: [UInt8](repeating: 0, count: 18) + [0x10, 0x2A])
    }

    @Test("BVP: vectors decoded by the loop of mountainaught/e4-python-server main.py give the same deltas")
    func bvpReferenceVectors() throws {
        // main.py's decode of 00 01 02 … 13: 22 seven-bit values, then 0x13 & 0x3F as its unused 23rd value.
        let counting = try E4BVPPacket.decode((0..<20).map { UInt8($0) })
        let expected: [(Int8, Int8)] = [(0, 0), (32, 32), (24, 16), (10, 6), (3, -62), (1, 16), (-48, 44), (24, 13),
                                        (7, 3), (-30, 1), (8, -56)]
        #expect(counting.deltas == (try expected.map { try E4BVPPacket.Delta(green: $0.0, red: $0.1) }))
        #expect(counting.trailer == 19)

        let ones = try E4BVPPacket.decode([UInt8](repeating: 0xFF, count: 20))
        #expect(ones.deltas.allSatisfy { $0.green == -1 && $0.red == -1 })
        #expect(ones.trailer == 63)

        let minimum = try E4BVPPacket.decode([0x81, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x81, 0x02, 0x04,
                                              0x08, 0x10, 0x20, 0x40, 0x81, 0x02, 0x04, 0x08, 0x10, 0x3F])
        #expect(minimum.deltas.allSatisfy { $0.green == -64 && $0.red == -64 })
        #expect(minimum.trailer == 63)
    }

    @Test("BVP: deltas beyond 7 bits, a trailer beyond 6 bits and a wrong sample count are refused")
    func bvpRanges() throws {
        #expect(throws: GATTCodecError.outOfRange(field: "E4 BVP green delta", value: 64)) {
            try E4BVPPacket.Delta(green: 64, red: 0)
        }
        #expect(throws: GATTCodecError.outOfRange(field: "E4 BVP red delta", value: -65)) {
            try E4BVPPacket.Delta(green: 0, red: -65)
        }
        let deltas = [E4BVPPacket.Delta](repeating: try E4BVPPacket.Delta(green: 63, red: -64), count: 11)
        #expect(throws: GATTCodecError.outOfRange(field: "E4 BVP trailer", value: 64)) {
            try E4BVPPacket(deltas: deltas, trailer: 64)
        }
        #expect(throws: GATTCodecError.outOfRange(field: "E4 BVP sample count", value: 10)) {
            try E4BVPPacket(deltas: Array(deltas.prefix(10)))
        }
        let full = try E4BVPPacket(deltas: deltas, trailer: 63)
        #expect(try E4BVPPacket.decode(full.encode()) == full)
        expectEveryPrefixTruncated(E4BVPPacket.self, full.encode())
        expectTooLong(E4BVPPacket.self, full.encode(), field: "E4 BVP packet length")
        expectEveryValueRoundTrips(E4BVPPacket.self, length: 20)
    }

    // MARK: Battery

    @Test("battery: one byte, percent; above 100 and longer values are refused")
    func battery() throws {
        try expectCodes(E4BatteryLevel(percent: 100), as: [0x64])
        #expect(try E4BatteryLevel.decode([50]).fraction == 0.5)
        #expect(throws: GATTCodecError.outOfRange(field: "E4 battery level", value: 101)) {
            try E4BatteryLevel.decode([101])
        }
        expectEveryPrefixTruncated(E4BatteryLevel.self, [0x64])
        expectTooLong(E4BatteryLevel.self, [0x64], field: "E4 battery value length")
    }

    // MARK: Helpers

    /// A value one or more bytes longer than the fixed layout is `outOfRange` of the length, never decoded with
    /// bytes ignored: a longer E4 packet is a layout we do not know.
    private func expectTooLong<Value: GATTCharacteristicValue>(
        _: Value.Type, _ full: [UInt8], field: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for extra in 1...3 {
            let long = full + [UInt8](repeating: 0, count: extra)
            #expect(throws: GATTCodecError.outOfRange(field: field, value: long.count), sourceLocation: sourceLocation) {
                try Value.decode(long)
            }
        }
    }

    /// Every value of `length` bytes — these layouts have no reserved bit patterns — decodes and encodes back to
    /// the same bytes. Deterministic (SplitMix64 from a fixed seed).
    private func expectEveryValueRoundTrips<Value: GATTCharacteristicValue>(
        _: Value.Type, length: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        var random = SimulationRandom(seed: 0xE4)
        for _ in 0..<2000 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            do {
                #expect(try Value.decode(bytes).encode() == bytes, sourceLocation: sourceLocation)
            } catch {
                Issue.record("\(bytes) threw \(error)", sourceLocation: sourceLocation)
            }
        }
    }
}
