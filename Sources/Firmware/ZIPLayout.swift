import Foundation

/// Checks, before ZIPFoundation reads a package from memory, that every offset its reader will seek to lies
/// within the bytes.
///
/// ZIPFoundation 0.9.20's in-memory archive (`Archive(data:accessMode:)`) has two faults a hostile or damaged
/// package reaches, both found by the `dfu-package` fuzz target (docs/reliability.md):
/// - a seek past the end followed by a read traps (`MemoryFile.readData` makes a range with a negative length),
///   so a central directory entry whose local header offset points past the end crashed the gateway;
/// - when no end record is found it throws before closing the `FILE` that retains the data, so every
///   bytes-that-are-not-a-zip leaked the whole input (LeakSanitizer).
/// The reader walks the central directory as ZIPFoundation does (`Archive.makeIterator`) and accepts the layout
/// every packaging tool writes for a DFU package: no ZIP64 and no data descriptors (streamed zips), which a
/// package of a few hundred KB never needs.
struct ZIPLayout {
    enum Problem: Equatable {
        /// No end record ZIPFoundation can read: not a zip at all.
        case notAZip
        /// A zip, but one ZIPFoundation could not read safely from memory; the reason is for the error message.
        case unsupported(String)
    }

    static let endRecordSize = 22
    static let centralEntrySize = 46
    static let localHeaderSize = 30

    private let bytes: [UInt8]

    static func check(_ data: Data) -> Problem? { ZIPLayout(bytes: [UInt8](data)).problem() }

    private func problem() -> Problem? {
        guard let end = endRecordOffset() else { return .notAZip }
        if end >= 20, signature(at: end - 20) == 0x0706_4B50 { return .unsupported("ZIP64") }
        let entryCount = Int(u16(end + 10))
        let directoryStart = Int(u32(end + 16))
        if u16(end + 8) == 0xFFFF || entryCount == 0xFFFF || u32(end + 12) == 0xFFFF_FFFF || u32(end + 16) == 0xFFFF_FFFF {
            return .unsupported("ZIP64")
        }
        guard directoryStart <= bytes.count else { return .unsupported("its central directory lies past its end") }
        var position = directoryStart
        for _ in 0..<entryCount {
            // ZIPFoundation stops at the first entry it cannot read; a seek past the end would trap first.
            guard position <= bytes.count else { return .unsupported("an entry lies past its end") }
            guard position + Self.centralEntrySize <= bytes.count, signature(at: position) == 0x0201_4B50 else { break }
            let nameLength = Int(u16(position + 28)), extraLength = Int(u16(position + 30))
            let commentLength = Int(u16(position + 32))
            let next = position + Self.centralEntrySize + nameLength + extraLength + commentLength
            guard next <= bytes.count else { break }
            if let problem = entryProblem(at: position, extra: (position + Self.centralEntrySize + nameLength, extraLength)) {
                return problem
            }
            position = next
        }
        return nil
    }

    /// The central directory entry at `position` and the local header and data it points to.
    private func entryProblem(at position: Int, extra: (start: Int, length: Int)) -> Problem? {
        if u16(position + 8) & 0x0008 != 0 { return .unsupported("data descriptors (a streamed zip)") }
        let compressed = u16(position + 10) != 0
        let compressedSize = u32(position + 20), uncompressedSize = u32(position + 24)
        let localOffset = u32(position + 42)
        if compressedSize == 0xFFFF_FFFF || uncompressedSize == 0xFFFF_FFFF || localOffset == 0xFFFF_FFFF
            || hasZIP64Field(extra.start, extra.length) {
            return .unsupported("ZIP64")
        }
        let local = Int(localOffset)
        guard local <= bytes.count else { return .unsupported("an entry's data lies past its end") }
        guard local + Self.localHeaderSize <= bytes.count, signature(at: local) == 0x0403_4B50 else { return nil }
        let localNameLength = Int(u16(local + 26)), localExtraLength = Int(u16(local + 28))
        let dataStart = local + Self.localHeaderSize + localNameLength + localExtraLength
        if hasZIP64Field(local + Self.localHeaderSize + localNameLength, localExtraLength) { return .unsupported("ZIP64") }
        let dataSize = Int(compressed ? compressedSize : uncompressedSize)
        guard dataStart + dataSize <= bytes.count else { return .unsupported("an entry's data lies past its end") }
        return nil
    }

    /// The last end-record signature at least 22 bytes before the end, when its comment fits: where
    /// `Archive.scanForEndOfCentralDirectoryRecord` finds one.
    private func endRecordOffset() -> Int? {
        var offset = bytes.count - Self.endRecordSize
        while offset >= 0 {
            if signature(at: offset) == 0x0605_4B50 {
                return offset + Self.endRecordSize + Int(u16(offset + 20)) <= bytes.count ? offset : nil
            }
            offset -= 1
        }
        return nil
    }

    /// Whether an extra field (header id, size, data…) holds ZIP64 extended information (id 1). A field cut short
    /// ends the walk, as ZIPFoundation's parser ends it.
    private func hasZIP64Field(_ start: Int, _ length: Int) -> Bool {
        var position = start
        let end = min(bytes.count, start + length)
        while position + 4 <= end {
            if u16(position) == 0x0001 { return true }
            position += 4 + Int(u16(position + 2))
        }
        return false
    }

    private func u16(_ offset: Int) -> UInt16 {
        guard offset + 2 <= bytes.count else { return 0 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    private func u32(_ offset: Int) -> UInt32 {
        guard offset + 4 <= bytes.count else { return 0 }
        return (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }

    private func signature(at offset: Int) -> UInt32? { offset >= 0 && offset + 4 <= bytes.count ? u32(offset) : nil }
}
