/// The write to the command characteristic (0x3E71) that makes an E4 start notifying its sensors:
/// `[0x01, Unix seconds as u32 little-endian]`, written after notifications are enabled.
///
/// Three independent clients build exactly these five bytes: `mountainaught/e4-python-server` `main.py`
/// (`main_ble_loop`: `struct.pack('<BI', 1, int(time.time()))`), `ismaelwarnants/Gadgetbridge-EmpaticaE4`
/// (`EmpaticaE4DeviceSupport.initializeDevice`, which calls it the authorisation step) and a Web Bluetooth
/// client. One other experimental viewer writes a lone `0x02` instead; nothing confirms that, so it is not
/// modelled. The E4 sends no timestamps of its own in its packets, so this write is also the only clock the
/// device is given, and the host's start time is what every sample time is reckoned from
/// (`E4SampleClock`).
///
/// Decoding (for the simulated E4) refuses any other opcode as `reservedValue` and any byte after the five as
/// `outOfRange` of the length: we know of no other command, so we cannot say what one would mean.
public struct E4StartCommand: GATTCharacteristicValue, Hashable {
    public static let characteristicUUID = E4UUID.Short.command
    public static let opcode: UInt8 = 0x01
    public static let byteCount = 5

    /// Whole seconds since 1970-01-01 UTC, as the host's clock read them when it wrote the command.
    public let unixSeconds: UInt32

    public init(unixSeconds: UInt32) { self.unixSeconds = unixSeconds }

    /// The command for a host time in Unix milliseconds (the contract's unit), truncated to whole seconds as the
    /// reference clients do. Throws `outOfRange` before 1970 or after 2106, which a u32 cannot hold.
    public init(unixMilliseconds: Int64) throws(GATTCodecError) {
        let seconds = unixMilliseconds >= 0 ? unixMilliseconds / 1000 : -1
        guard let value = UInt32(exactly: seconds) else {
            throw .outOfRange(field: "E4 start time", value: Int(clamping: seconds))
        }
        unixSeconds = value
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> E4StartCommand {
        var reader = ByteReader(bytes)
        let opcode = try reader.readUInt8()
        guard opcode == Self.opcode else { throw .reservedValue(field: "E4 command opcode", value: Int(opcode)) }
        let seconds = try reader.read(UInt32.self, byteOrder: .littleEndian)
        guard reader.isAtEnd else { throw .outOfRange(field: "E4 start command length", value: bytes.count) }
        return E4StartCommand(unixSeconds: seconds)
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(Self.opcode)
        writer.write(unixSeconds, byteOrder: .littleEndian)
        return writer.bytes
    }
}
