/// The motion service's step count (`00030001-…`, read and notify): the steps the watch counted today, one
/// `uint32_t` in the nRF52's byte order, little-endian — 4 bytes.
///
/// Source: `InfiniTimeOrg/InfiniTime` `doc/MotionService.md` ("Step count") and `src/components/ble/MotionService.cpp`
/// (`OnStepCountRequested` and `OnNewStepCountValue` append the `uint32_t` as it lies in memory). The watch notifies
/// when the count changes and notifies 0 when its day ends (`src/components/motion/MotionController.cpp`,
/// `Update` and `AdvanceDay`): a smaller value than the last one is a new day, not an error.
public struct InfiniTimeStepCount: Hashable, Sendable {
    public static let byteCount = 4

    public let steps: UInt32

    public init(steps: UInt32) { self.steps = steps }

    /// Exactly 4 bytes: fewer or more mean another layout, refused as `truncated`.
    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> InfiniTimeStepCount {
        var reader = ByteReader(bytes)
        let steps = try reader.read(UInt32.self)
        try reader.expectEnd()
        return InfiniTimeStepCount(steps: steps)
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(steps)
        return writer.bytes
    }
}
