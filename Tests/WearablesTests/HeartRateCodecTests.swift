import Testing
import Wearables

@Suite("Heart Rate Service")
struct HeartRateCodecTests {
    @Test("a u8 heart rate with nothing else")
    func uint8Value() throws {
        let measurement = try HeartRateMeasurement.decode([0x00, 0x48])
        #expect(measurement.bpm == 72)
        #expect(measurement.contact == nil)
        #expect(measurement.energyExpendedKJ == nil)
        #expect(measurement.rrIntervals.isEmpty)
    }

    @Test("a u16 heart rate (flags bit 0), above and below 255")
    func uint16Value() throws {
        #expect(try HeartRateMeasurement.decode([0x01, 0x2C, 0x01]).bpm == 300)
        #expect(try HeartRateMeasurement.decode([0x01, 0x48, 0x00]).bpm == 72)
    }

    @Test(
        "sensor contact: bits 1–2 0b11 detected, 0b10 not detected, 0b00 and 0b01 not supported",
        arguments: [(UInt8(0x06), true), (0x04, false), (0x02, nil), (0x00, nil)] as [(UInt8, Bool?)]
    )
    func contact(flags: UInt8, expected: Bool?) throws {
        #expect(try HeartRateMeasurement.decode([flags, 0x48]).contact == expected)
    }

    @Test("energy expended (bit 3) is a u16 in kJ after the heart rate")
    func energyExpended() throws {
        // 0x3039 = 12345 kJ.
        let measurement = try HeartRateMeasurement.decode([0x08, 0x48, 0x39, 0x30])
        #expect(measurement.bpm == 72)
        #expect(measurement.energyExpendedKJ == 12345)
    }

    @Test("RR intervals (bit 4) fill the rest of the value, in 1/1024 s")
    func rrIntervals() throws {
        // 0x0400 = 1024 → 1 s, 0x0200 = 512 → 0.5 s, 0x0366 = 870 → 0.849609375 s.
        let measurement = try HeartRateMeasurement.decode([0x10, 0x48, 0x00, 0x04, 0x00, 0x02, 0x66, 0x03])
        #expect(measurement.rawRRIntervals == [1024, 512, 870])
        #expect(measurement.rrIntervals == [1, 0.5, 0.849609375])
        #expect(measurement.rrIntervalsMilliseconds == [1000, 500, 849.609375])
    }

    @Test("flags 0x16: contact detected and one RR interval")
    func contactAndRR() throws {
        let measurement = try HeartRateMeasurement.decode([0x16, 0x48, 0x00, 0x04])
        #expect(measurement.bpm == 72)
        #expect(measurement.contact == true)
        #expect(measurement.rrIntervals == [1])
    }

    @Test("every field at once: u16 value, contact, energy, two RR intervals")
    func everything() throws {
        let bytes: [UInt8] = [0x1F, 0x2C, 0x01, 0x39, 0x30, 0x00, 0x04, 0x00, 0x02]
        let expected = try HeartRateMeasurement(
            bpm: 300, contact: true, energyExpendedKJ: 12345, rawRRIntervals: [1024, 512])
        #expect(try HeartRateMeasurement.decode(bytes) == expected)
        #expect(expected.encode() == bytes)
    }

    @Test("a lone byte after the last whole RR interval is ignored (the intervals are 'as many as fit')")
    func oddTrailingRRByte() throws {
        let measurement = try HeartRateMeasurement.decode([0x10, 0x48, 0x00, 0x04, 0x7F])
        #expect(measurement.rawRRIntervals == [1024])
        #expect(try HeartRateMeasurement.decode([0x10, 0x48, 0x7F]).rawRRIntervals.isEmpty)
    }

    @Test("bytes beyond the announced fields are padding when bit 4 is clear")
    func padding() throws {
        let measurement = try HeartRateMeasurement.decode([0x00, 0x48, 0x00, 0x04])
        #expect(measurement.bpm == 72)
        #expect(measurement.rrIntervals.isEmpty)
    }

    @Test("a value cut before the announced fields is truncated; RR intervals may be absent")
    func truncation() throws {
        #expect(throws: GATTCodecError.truncated(expected: 3, actual: 2)) {
            try HeartRateMeasurement.decode([0x01, 0x48])
        }
        #expect(throws: GATTCodecError.truncated(expected: 4, actual: 3)) {
            try HeartRateMeasurement.decode([0x08, 0x48, 0x39])
        }
        let full: [UInt8] = [0x19, 0x48, 0x00, 0x39, 0x30, 0x00, 0x04, 0x00, 0x02]
        for length in 0..<5 {
            #expect(throws: GATTCodecError.self) { try HeartRateMeasurement.decode(Array(full.prefix(length))) }
        }
        for length in 5...full.count {
            #expect(
                try HeartRateMeasurement.decode(Array(full.prefix(length))).rawRRIntervals.count == (length - 5) / 2)
        }
    }

    @Test("encoding sets the flags from the fields present and uses u8 unless asked or needed")
    func encodes() throws {
        #expect(try HeartRateMeasurement(bpm: 72).encode() == [0x00, 0x48])
        #expect(try HeartRateMeasurement(bpm: 72).encode(alwaysUInt16: true) == [0x01, 0x48, 0x00])
        #expect(try HeartRateMeasurement(bpm: 256).encode() == [0x01, 0x00, 0x01])
        #expect(try HeartRateMeasurement(bpm: 72, contact: false).encode() == [0x04, 0x48])
        #expect(try HeartRateMeasurement(bpm: 72, energyExpendedKJ: 0).encode() == [0x08, 0x48, 0x00, 0x00])
        #expect(try HeartRateMeasurement(bpm: 72, rawRRIntervals: [870]).encode() == [0x10, 0x48, 0x66, 0x03])
        #expect(
            try HeartRateMeasurement.decode(HeartRateMeasurement(bpm: 72).encode(alwaysUInt16: true))
                == HeartRateMeasurement(bpm: 72))
    }

    @Test("values the wire cannot carry are refused when the measurement is made")
    func refusesOutOfRange() {
        #expect(throws: GATTCodecError.outOfRange(field: "bpm", value: -1)) { try HeartRateMeasurement(bpm: -1) }
        #expect(throws: GATTCodecError.outOfRange(field: "bpm", value: 65536)) { try HeartRateMeasurement(bpm: 65536) }
        #expect(throws: GATTCodecError.outOfRange(field: "energy expended", value: 70000)) {
            try HeartRateMeasurement(bpm: 60, energyExpendedKJ: 70000)
        }
    }

    @Test("body sensor location: named values, and reserved ones kept rather than refused")
    func bodySensorLocation() throws {
        try expectCodes(BodySensorLocation.other, as: [0x00])
        try expectCodes(BodySensorLocation.chest, as: [0x01])
        try expectCodes(BodySensorLocation.wrist, as: [0x02])
        try expectCodes(BodySensorLocation.finger, as: [0x03])
        try expectCodes(BodySensorLocation.hand, as: [0x04])
        try expectCodes(BodySensorLocation.earLobe, as: [0x05])
        try expectCodes(BodySensorLocation.foot, as: [0x06])
        try expectCodes(BodySensorLocation.unknown(7), as: [0x07])
        #expect(BodySensorLocation.unknown(1) == .chest)
    }

    @Test("the control point knows one command, 0x01 reset energy expended")
    func controlPoint() throws {
        try expectCodes(HeartRateControlPointCommand.resetEnergyExpended, as: [0x01])
        #expect(throws: GATTCodecError.reservedValue(field: "heart rate control point", value: 2)) {
            try HeartRateControlPointCommand.decode([0x02])
        }
    }
}
