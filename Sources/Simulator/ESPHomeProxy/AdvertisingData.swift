import SimulatedWearables

/// A simulated advertisement as the bytes on the air: the AD structures (length, type, data; Core Specification
/// Supplement, Part A) of the advertising PDU followed by those of the scan response, which is what an ESP32 proxy
/// puts in `BluetoothLERawAdvertisement.data` (its scanner is active by default and concatenates both, at most
/// 31 + 31 bytes).
///
/// Structures go in a fixed order (flags, service UUIDs, appearance, TX power, the name, service data, manufacturer
/// data), each into the advertising PDU while it fits and into the scan response after; one that fits neither is left
/// out, except the name, which is shortened (type 0x08) to what is left. It does not model devices that split their
/// data otherwise: a central that parses AD structures cannot tell.
enum AdvertisingData {
    static let packetSize = 31

    static func bytes(_ advertisement: SimulatedAdvertisement) -> [UInt8] {
        var packets: [[UInt8]] = [[], []]
        func place(_ type: UInt8, _ data: [UInt8]) {
            let structure = [UInt8(data.count + 1), type] + data
            for index in packets.indices where packets[index].count + structure.count <= packetSize {
                packets[index] += structure
                return
            }
        }
        place(0x01, [advertisement.flags])
        let sixteen = advertisement.serviceUUIDs.compactMap(\.shortUUID)
        if !sixteen.isEmpty { place(0x03, sixteen.flatMap(littleEndian)) }
        let long = advertisement.serviceUUIDs.filter { $0.shortUUID == nil }
        if !long.isEmpty { place(0x07, long.flatMap(uuidBytes)) }
        if let appearance = advertisement.appearance { place(0x19, littleEndian(appearance)) }
        if let power = advertisement.txPower { place(0x0A, [UInt8(bitPattern: Int8(clamping: power))]) }
        if let name = advertisement.localName {
            let utf8 = Array(name.utf8)
            let room = packets.map { packetSize - $0.count - 2 }.max() ?? 0
            if utf8.count <= room { place(0x09, utf8) } else if room > 0 { place(0x08, Array(utf8.prefix(room))) }
        }
        for (uuid, data) in advertisement.serviceData.sorted(by: { $0.key < $1.key }) {
            if let short = uuid.shortUUID { place(0x16, littleEndian(short) + data) } else { place(0x21, uuidBytes(uuid) + data) }
        }
        for (company, data) in advertisement.manufacturerData.sorted(by: { $0.key < $1.key }) {
            place(0xFF, littleEndian(company) + data)
        }
        return packets[0] + packets[1]
    }

    private static func littleEndian(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

    /// A 128-bit UUID least significant byte first, as AD structures carry it.
    static func uuidBytes(_ uuid: BluetoothUUID) -> [UInt8] {
        let hex = Array(uuid.string.filter { $0 != "-" })
        let bigEndian = stride(from: 0, to: hex.count, by: 2).compactMap { UInt8(String(hex[$0...$0 + 1]), radix: 16) }
        return bigEndian.reversed()
    }
}
