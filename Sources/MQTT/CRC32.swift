import CSystemZlib

/// CRC-32 as zlib computes it (reflected polynomial 0xEDB88320), from the system's zlib. The spool uses it to find
/// records torn by a crash in the middle of a write.
package enum CRC32 {
    package static func checksum(_ bytes: some Sequence<UInt8>, seed: UInt32 = 0) -> UInt32 {
        let contiguous = bytes.withContiguousStorageIfAvailable { buffer in
            buffer.isEmpty ? seed : UInt32(CSystemZlib.crc32(UInt(seed), buffer.baseAddress, UInt32(buffer.count)))
        }
        return contiguous ?? checksum(Array(bytes), seed: seed)
    }
}
