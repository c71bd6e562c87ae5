import CSystemZlib

/// A firmware package's zip, read from memory: the central directory on opening, an entry's bytes on request —
/// stored or deflated (the system's zlib), checked against the size and CRC-32 the directory declares.
///
/// It reads what packaging tools write for a few files of a few hundred KB (nrfutil, adafruit-nrfutil, `zip`,
/// Python's zipfile, streamed zips with data descriptors) and refuses ZIP64, encryption and other compression
/// methods with the reason. The central directory is authoritative: the local header is read only for where the
/// data starts. Every offset is checked against the bytes before it is read, so a damaged or hostile package is a
/// `DFUPackageError`, never a trap, and nothing is held beyond the input and the entry being inflated.
struct ZIPArchive {
    struct Entry {
        enum Kind { case file, directory, symbolicLink }

        var name: String
        var kind: Kind
        var method: UInt16
        var crc32: UInt32
        var compressedSize: Int
        var uncompressedSize: Int
        var localHeaderOffset: Int
    }

    /// In the central directory's order.
    private(set) var entries: [Entry] = []
    private let bytes: [UInt8]

    static let endRecordSignature: UInt32 = 0x0605_4B50
    static let zip64LocatorSignature: UInt32 = 0x0706_4B50
    static let centralEntrySignature: UInt32 = 0x0201_4B50
    static let localHeaderSignature: UInt32 = 0x0403_4B50
    static let endRecordSize = 22
    static let centralEntrySize = 46
    static let localHeaderSize = 30

    /// Refuses entries that together declare more than `limit` bytes before inflating any, so reading every entry
    /// never holds more (`DFUPackageError.expandsTooLarge`).
    init(bytes: [UInt8], expandingAtMost limit: Int) throws(DFUPackageError) {
        self.bytes = bytes
        guard let end = Self.endRecordOffset(in: bytes) else { throw .notAZip }
        if end >= 20, bytes.u32(at: end - 20) == Self.zip64LocatorSignature { throw .unsupportedZip("ZIP64") }
        let count = Int(bytes.u16(at: end + 10)!)
        let directoryStart = Int(bytes.u32(at: end + 16)!)
        if count == 0xFFFF || bytes.u32(at: end + 12) == 0xFFFF_FFFF || directoryStart == 0xFFFF_FFFF {
            throw .unsupportedZip("ZIP64")
        }
        guard directoryStart <= end else { throw .unsupportedZip("its central directory lies past its end") }
        var position = directoryStart
        var names = Set<String>()
        var declaredTotal = 0
        for _ in 0..<count {
            let entry = try Self.entry(at: &position, in: bytes, before: end)
            guard names.insert(entry.name).inserted else {
                throw .unsupportedZip("it holds two entries named \(entry.name)")
            }
            declaredTotal += entry.uncompressedSize
            guard declaredTotal <= limit else { throw .expandsTooLarge(bytes: UInt64(declaredTotal), limit: limit) }
            entries.append(entry)
        }
    }

    /// The central directory entry at `position`, which moves past it.
    private static func entry(at position: inout Int, in bytes: [UInt8], before end: Int) throws(DFUPackageError) -> Entry {
        let start = position
        guard start + centralEntrySize <= end, bytes.u32(at: start) == centralEntrySignature,
              let nameLength = bytes.u16(at: start + 28).map(Int.init), let extraLength = bytes.u16(at: start + 30).map(Int.init),
              let commentLength = bytes.u16(at: start + 32).map(Int.init),
              start + centralEntrySize + nameLength + extraLength + commentLength <= end
        else { throw .unsupportedZip("its central directory is damaged") }
        position = start + centralEntrySize + nameLength + extraLength + commentLength
        let name = String(decoding: bytes[(start + centralEntrySize)..<(start + centralEntrySize + nameLength)], as: UTF8.self)
        let flags = bytes.u16(at: start + 8)!
        let compressedSize = bytes.u32(at: start + 20)!, uncompressedSize = bytes.u32(at: start + 24)!
        let localHeaderOffset = bytes.u32(at: start + 42)!
        if compressedSize == 0xFFFF_FFFF || uncompressedSize == 0xFFFF_FFFF || localHeaderOffset == 0xFFFF_FFFF {
            throw .unsupportedZip("ZIP64")
        }
        guard flags & 0x0001 == 0 else { throw .unsupportedZip("\(name) is encrypted") }
        // Made on Unix (host 3): the upper half of the external attributes is the file's mode.
        let unixMode = bytes[start + 5] == 3 ? (bytes.u32(at: start + 38)! >> 16) & 0o170000 : 0
        let kind: Entry.Kind =
            name.hasSuffix("/") || unixMode == 0o040000 ? .directory : unixMode == 0o120000 ? .symbolicLink : .file
        return Entry(name: name, kind: kind, method: bytes.u16(at: start + 10)!, crc32: bytes.u32(at: start + 16)!,
                     compressedSize: Int(compressedSize), uncompressedSize: Int(uncompressedSize),
                     localHeaderOffset: Int(localHeaderOffset))
    }

    /// The last end-record signature whose record and comment fit in the bytes: where every zip reader looks first.
    private static func endRecordOffset(in bytes: [UInt8]) -> Int? {
        var offset = bytes.count - endRecordSize
        while offset >= 0 {
            if bytes.u32(at: offset) == endRecordSignature {
                return offset + endRecordSize + Int(bytes.u16(at: offset + 20)!) <= bytes.count ? offset : nil
            }
            offset -= 1
        }
        return nil
    }

    /// The entry's bytes: never more than its declared size while inflating, then exactly that size and its CRC-32.
    func contents(of entry: Entry) throws(DFUPackageError) -> [UInt8] {
        let local = entry.localHeaderOffset
        guard local + Self.localHeaderSize <= bytes.count, bytes.u32(at: local) == Self.localHeaderSignature else {
            throw .unsupportedZip("an entry's data lies past its end")
        }
        let dataStart = local + Self.localHeaderSize + Int(bytes.u16(at: local + 26)!) + Int(bytes.u16(at: local + 28)!)
        guard dataStart <= bytes.count - entry.compressedSize else { throw .unsupportedZip("an entry's data lies past its end") }
        let data = bytes[dataStart..<(dataStart + entry.compressedSize)]
        let contents: [UInt8]
        switch entry.method {
        case 0: contents = Array(data)
        case 8: contents = try Self.inflate(data, declared: entry.uncompressedSize, name: entry.name)
        default: throw .unsupportedZip("\(entry.name) is compressed with method \(entry.method), not deflate")
        }
        guard contents.count == entry.uncompressedSize else {
            throw .corruptEntry(name: entry.name, reason: "it unpacks to \(contents.count) bytes, its header declares \(entry.uncompressedSize)")
        }
        guard DFUChecksum.crc32(contents) == entry.crc32 else {
            throw .corruptEntry(name: entry.name, reason: "its CRC-32 does not match")
        }
        return contents
    }

    /// Raw deflate (RFC 1951) into a buffer one byte longer than declared: filling that byte proves an overrun.
    private static func inflate(_ input: ArraySlice<UInt8>, declared: Int, name: String) throws(DFUPackageError) -> [UInt8] {
        var stream = z_stream()
        guard wear2mqtt_inflate_init_raw(&stream) == Z_OK else {
            throw .corruptEntry(name: name, reason: "it does not unpack (zlib cannot start)")
        }
        defer { inflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: declared + 1)
        let status = input.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { output in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = UInt32(input.count)
                stream.next_out = output.baseAddress
                stream.avail_out = UInt32(output.count)
                return CSystemZlib.inflate(&stream, Z_FINISH)
            }
        }
        let produced = Int(stream.total_out)
        if produced > declared {
            throw .corruptEntry(name: name, reason: "it inflates to more than the \(declared) bytes its header declares")
        }
        guard status == Z_STREAM_END else {
            let reason = stream.msg.map { String(cString: $0) } ?? (status == Z_BUF_ERROR ? "its data ends early" : "zlib \(status)")
            throw .corruptEntry(name: name, reason: "it does not unpack (\(reason))")
        }
        output.removeLast(output.count - produced)
        return output
    }
}

extension [UInt8] {
    /// Little-endian fields; nil past the end.
    fileprivate func u16(at offset: Int) -> UInt16? {
        guard offset >= 0, offset + 2 <= count else { return nil }
        return UInt16(self[offset]) | UInt16(self[offset + 1]) << 8
    }

    fileprivate func u32(at offset: Int) -> UInt32? {
        guard offset >= 0, offset + 4 <= count else { return nil }
        return UInt32(self[offset]) | UInt32(self[offset + 1]) << 8 | UInt32(self[offset + 2]) << 16 | UInt32(self[offset + 3]) << 24
    }
}
