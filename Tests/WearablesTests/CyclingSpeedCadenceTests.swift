import Testing
import Wearables

typealias Wheel = CyclingSpeedCadenceMeasurement.WheelRevolutions
typealias Crank = CyclingSpeedCadenceMeasurement.CrankRevolutions

@Suite("Cycling Speed and Cadence")
struct CyclingSpeedCadenceTests {
    // Wheel: 1000 revolutions (0x000003E8) at 2048/1024 s (0x0800). Crank: 50 (0x0032) at 1024/1024 s (0x0400).
    let wheel = Wheel(cumulativeRevolutions: 1000, lastEventTime: 2048)
    let crank = Crank(cumulativeRevolutions: 50, lastEventTime: 1024)

    @Test("no revolution data (flags 0x00)")
    func none() throws {
        try expectCodes(CyclingSpeedCadenceMeasurement(), as: [0x00])
    }

    @Test("wheel data only (flags 0x01)")
    func wheelOnly() throws {
        let bytes: [UInt8] = [0x01, 0xE8, 0x03, 0x00, 0x00, 0x00, 0x08]
        try expectCodes(CyclingSpeedCadenceMeasurement(wheel: wheel), as: bytes)
        expectEveryPrefixTruncated(CyclingSpeedCadenceMeasurement.self, bytes)
    }

    @Test("crank data only (flags 0x02)")
    func crankOnly() throws {
        let bytes: [UInt8] = [0x02, 0x32, 0x00, 0x00, 0x04]
        try expectCodes(CyclingSpeedCadenceMeasurement(crank: crank), as: bytes)
        expectEveryPrefixTruncated(CyclingSpeedCadenceMeasurement.self, bytes)
    }

    @Test("wheel and crank data (flags 0x03), trailing padding ignored")
    func both() throws {
        let bytes: [UInt8] = [0x03, 0xE8, 0x03, 0x00, 0x00, 0x00, 0x08, 0x32, 0x00, 0x00, 0x04]
        try expectCodes(CyclingSpeedCadenceMeasurement(wheel: wheel, crank: crank), as: bytes)
        expectEveryPrefixTruncated(CyclingSpeedCadenceMeasurement.self, bytes)
        #expect(
            try CyclingSpeedCadenceMeasurement.decode(bytes + [0x00, 0x00])
                == CyclingSpeedCadenceMeasurement(wheel: wheel, crank: crank))
    }

    @Test("speed is revolutions × circumference over the event-time difference; cadence is revolutions per minute")
    func speedAndCadence() {
        var calculator = CyclingSpeedCadenceCalculator()
        #expect(calculator.update(with: .init(wheel: wheel, crank: crank)) == CyclingSpeedCadence())
        // One second later (1024 ticks): 2 wheel revolutions, 1 crank revolution.
        let next = calculator.update(
            with: .init(
                wheel: Wheel(cumulativeRevolutions: 1002, lastEventTime: 3072),
                crank: Crank(cumulativeRevolutions: 51, lastEventTime: 2048))
        )
        #expect(next.speedMetresPerSecond == 2 * 2.105)
        #expect(next.cadenceRPM == 60)
    }

    @Test("the wheel circumference is configurable")
    func circumference() {
        var calculator = CyclingSpeedCadenceCalculator(wheelCircumferenceMetres: 2)
        _ = calculator.update(with: .init(wheel: Wheel(cumulativeRevolutions: 0, lastEventTime: 0)))
        // 3 revolutions in 512 ticks = 0.5 s: 6 m in 0.5 s.
        let next = calculator.update(with: .init(wheel: Wheel(cumulativeRevolutions: 3, lastEventTime: 512)))
        #expect(next.speedMetresPerSecond == 12)
        #expect(next.cadenceRPM == nil)
    }

    @Test("an unchanged event time means no new revolution: nil, and the next change measures from the last one")
    func unchangedEventTime() {
        var calculator = CyclingSpeedCadenceCalculator()
        _ = calculator.update(with: .init(wheel: wheel, crank: crank))
        #expect(calculator.update(with: .init(wheel: wheel, crank: crank)) == CyclingSpeedCadence())
        let later = calculator.update(
            with: .init(
                wheel: Wheel(cumulativeRevolutions: 1004, lastEventTime: 4096),
                crank: Crank(cumulativeRevolutions: 52, lastEventTime: 3072))
        )
        // 4 revolutions in 2 s; 2 crank revolutions in 2 s.
        #expect(later.speedMetresPerSecond == 2 * 2.105)
        #expect(later.cadenceRPM == 60)
    }

    @Test("event times roll over modulo 65536 and the u32 wheel counter modulo 2^32")
    func wheelRollover() {
        var calculator = CyclingSpeedCadenceCalculator()
        _ = calculator.update(with: .init(wheel: Wheel(cumulativeRevolutions: 0xFFFF_FFFE, lastEventTime: 0xFF00)))
        // 0xFFFFFFFE → 0x00000001 is 3 revolutions; 0xFF00 → 0x0300 is 256 + 768 = 1024 ticks = 1 s.
        let next = calculator.update(
            with: .init(wheel: Wheel(cumulativeRevolutions: 0x0000_0001, lastEventTime: 0x0300)))
        #expect(next.speedMetresPerSecond == 3 * 2.105)
    }

    @Test("the u16 crank counter rolls over modulo 65536")
    func crankRollover() {
        var calculator = CyclingSpeedCadenceCalculator()
        _ = calculator.update(with: .init(crank: Crank(cumulativeRevolutions: 0xFFFF, lastEventTime: 0xFC00)))
        // 0xFFFF → 0x0001 is 2 revolutions; 0xFC00 → 0x0000 is 1024 ticks = 1 s: 120 rpm.
        let next = calculator.update(with: .init(crank: Crank(cumulativeRevolutions: 0x0001, lastEventTime: 0x0000)))
        #expect(next.cadenceRPM == 120)
        #expect(next.speedMetresPerSecond == nil)
    }

    @Test("reset forgets the starting point")
    func reset() {
        var calculator = CyclingSpeedCadenceCalculator()
        _ = calculator.update(with: .init(crank: crank))
        calculator.reset()
        #expect(
            calculator.update(with: .init(crank: Crank(cumulativeRevolutions: 51, lastEventTime: 2048))).cadenceRPM
                == nil)
    }
}
