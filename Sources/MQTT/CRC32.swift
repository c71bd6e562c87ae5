/// CRC-32 as zlib computes it (reflected polynomial 0xEDB88320). The spool uses it to find records torn by a
/// crash in the middle of a write.
package enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = (value & 1) != 0 ? (value >> 1) ^ 0xEDB8_8320 : value >> 1 }
        return value
    }

    package static func checksum<Bytes: Sequence>(_ bytes: Bytes, seed: UInt32 = 0) -> UInt32 where Bytes.Element == UInt8 {
        var crc = ~seed
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return ~crc
    }
}
