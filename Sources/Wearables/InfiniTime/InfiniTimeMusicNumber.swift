/// The music service's numbers: position and total length (seconds), track number, track total, and playback
/// speed (percent, 100 = normal speed). Each is a 32-bit integer, **big-endian** — unlike every other InfiniTime
/// and SIG value.
///
/// Sources: `InfiniTimeOrg/InfiniTime` `src/components/ble/MusicService.cpp` (`OnCommand`: `(s[0] << 24) | (s[1] << 16)
/// | (s[2] << 8) | s[3]` into an `int`; the speed divided by 100.0; the position advanced by the watch itself while
/// playing, in seconds of ticks/1024 times the speed) and Gadgetbridge's `PineTimeJFSupport.intToBytes`
/// (`ByteBuffer.putInt`, big-endian). The firmware reads four bytes whatever the write's length, so every
/// encoding is exactly four; values are 0…2³¹−1 since the watch keeps them in a signed `int` and a negative
/// position, length or speed means nothing.
public struct InfiniTimeMusicNumber: Hashable, Sendable {
    public static let byteCount = 4
    /// Playback speed at normal rate, in the firmware's percent.
    public static let normalSpeed = InfiniTimeMusicNumber(unchecked: 100)

    public let value: Int32

    private init(unchecked value: Int32) { self.value = value }

    /// Throws `outOfRange` for a value below 0 or above `Int32.max`.
    public init(_ value: Int, field: String = "music number") throws(GATTCodecError) {
        guard let exact = Int32(exactly: value), exact >= 0 else { throw .outOfRange(field: field, value: value) }
        self.value = exact
    }

    /// A playback speed as a rate (1.0 normal, 1.5 faster), rounded to the firmware's whole percent.
    public init(playbackRate: Double) throws(GATTCodecError) {
        let percent = (playbackRate * 100).rounded()
        guard percent.isFinite, percent >= 0, percent <= Double(Int32.max) else {
            throw .outOfRange(field: "playback speed", value: Int(exactly: percent) ?? (percent < 0 ? Int.min : Int.max))
        }
        value = Int32(percent)
    }

    /// Exactly 4 bytes; a negative value (top bit set) is `outOfRange`.
    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> InfiniTimeMusicNumber {
        var reader = ByteReader(bytes)
        let raw = Int32(bitPattern: try reader.read(UInt32.self, byteOrder: .bigEndian))
        try reader.expectEnd()
        guard raw >= 0 else { throw .outOfRange(field: "music number", value: Int(raw)) }
        return InfiniTimeMusicNumber(unchecked: raw)
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(UInt32(bitPattern: value), byteOrder: .bigEndian)
        return writer.bytes
    }
}
