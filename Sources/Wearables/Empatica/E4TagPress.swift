/// **MODELED — not the real E4 protocol.** A press of the E4's button (the EmpaLink SDK's "tag",
/// `didReceiveTagAtTimestamp:fromDevice:`, "the timestamp of the button press in seconds" since 1970), as the
/// simulated E4 notifies it on characteristic 0x3EB4 in the status service 0x3EB0:
///
/// | bytes | field |
/// | --- | --- |
/// | 0–3 | Unix seconds of the press, `u32` little-endian (like the start command's time) |
/// | 4 | fraction of a second, in 1/256 s |
///
/// No public source shows how a real E4 sends tags: neither reverse-engineered client reads a button, and the SDK
/// hides the transport. Gadgetbridge subscribes to the control characteristic 0x3EB2 without decoding it, which
/// might be where real tags arrive; nothing confirms it, so 0x3EB2 is left alone and the tag gets a characteristic
/// of its own that no source lists, next to battery (0x3EB3) in the status service. The time is the device's
/// clock — the start command's time plus the time since it — because the SDK reports the press's time, not the
/// notification's. Replace this type (and the UUID) once a capture of a real E4 shows the real encoding.
///
/// Decoding refuses a shorter value as `truncated` and a longer one as `outOfRange` of the length.
public struct E4TagPress: GATTCharacteristicValue, Hashable {
    /// 0x3EB4, modeled.
    public static let characteristicUUID: UInt16 = 0x3EB4
    /// The 128-bit form BlueZ uses.
    public static let uuidString = "00003eb4-0000-1000-8000-00805f9b34fb"
    public static let byteCount = 5

    public let unixSeconds: UInt32
    /// 1/256 s after `unixSeconds`.
    public let fraction: UInt8

    public init(unixSeconds: UInt32, fraction: UInt8) {
        self.unixSeconds = unixSeconds
        self.fraction = fraction
    }

    /// The press at a time in Unix milliseconds, rounded down to 1/256 s. Throws `outOfRange` before 1970 or
    /// after 2106, which a u32 of seconds cannot hold.
    public init(unixMilliseconds: Int64) throws(GATTCodecError) {
        let seconds = unixMilliseconds >= 0 ? unixMilliseconds / 1000 : -1
        guard let whole = UInt32(exactly: seconds) else {
            throw .outOfRange(field: "E4 tag time", value: Int(clamping: seconds))
        }
        unixSeconds = whole
        fraction = UInt8(unixMilliseconds % 1000 * 256 / 1000)
    }

    /// The press time in Unix milliseconds (the fraction rounded to the nearest millisecond).
    public var unixMilliseconds: Int64 {
        Int64(unixSeconds) * 1000 + (Int64(fraction) * 1000 + 128) / 256
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> E4TagPress {
        var reader = ByteReader(bytes)
        let seconds = try reader.read(UInt32.self, byteOrder: .littleEndian)
        let fraction = try reader.readUInt8()
        guard reader.isAtEnd else { throw .outOfRange(field: "E4 tag length", value: bytes.count) }
        return E4TagPress(unixSeconds: seconds, fraction: fraction)
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(unixSeconds, byteOrder: .littleEndian)
        writer.write(fraction)
        return writer.bytes
    }
}
