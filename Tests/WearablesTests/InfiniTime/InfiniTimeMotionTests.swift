import Testing

@testable import Wearables

@Suite("InfiniTime motion service")
struct InfiniTimeMotionTests {
    @Test("step count is one uint32, little-endian (doc/MotionService.md; MotionService.cpp appends the uint32_t)")
    func steps() throws {
        let bytes: [UInt8] = [0x39, 0x30, 0x00, 0x00]
        #expect(try InfiniTimeStepCount.decode(bytes).steps == 12_345)
        #expect(InfiniTimeStepCount(steps: 12_345).encode() == bytes)
        #expect(InfiniTimeStepCount(steps: .max).encode() == [0xFF, 0xFF, 0xFF, 0xFF])
    }

    @Test("motion is three int16, x y z, little-endian, 1024 per g (doc/MotionService.md)")
    func motion() throws {
        // Lying flat: 1 g on z. Then x = −512 (−0.5 g).
        let flat: [UInt8] = [0x00, 0x00, 0x00, 0x00, 0x00, 0x04]
        let values = try InfiniTimeMotionValues.decode(flat)
        #expect(values == InfiniTimeMotionValues(x: 0, y: 0, z: 1024))
        #expect(abs(values.metresPerSecondSquared.z - 9.80665) < 1e-9)
        let tilted = InfiniTimeMotionValues(x: -512, y: 7, z: 1000)
        #expect(tilted.encode() == [0x00, 0xFE, 0x07, 0x00, 0xE8, 0x03])
        #expect(try InfiniTimeMotionValues.decode(tilted.encode()) == tilted)
    }

    @Test("every shorter or longer value is truncated")
    func lengths() {
        let steps: [UInt8] = [0x39, 0x30, 0x00, 0x00]
        for length in 0..<4 {
            #expect(throws: GATTCodecError.truncated(expected: 4, actual: length)) {
                try InfiniTimeStepCount.decode(Array(steps.prefix(length)))
            }
        }
        #expect(throws: GATTCodecError.truncated(expected: 4, actual: 5)) { try InfiniTimeStepCount.decode(steps + [0]) }
        let motion: [UInt8] = [1, 2, 3, 4, 5, 6]
        for length in 0..<6 {
            #expect(throws: GATTCodecError.self) { try InfiniTimeMotionValues.decode(Array(motion.prefix(length))) }
        }
        #expect(throws: GATTCodecError.truncated(expected: 6, actual: 7)) { try InfiniTimeMotionValues.decode(motion + [0]) }
    }
}
