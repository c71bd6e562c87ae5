import Foundation

/// Whether a zip archive's end-of-central-directory record can be read, checked before ZIPFoundation sees the
/// bytes.
///
/// ZIPFoundation 0.9.20 opens an in-memory archive by retaining its backing store for the `FILE` it makes and
/// releasing it in `fclose`; when no readable end record is found, `Archive(data:accessMode: .read)` throws
/// before anything closes that `FILE` (the file-backed path closes it), so every bytes-that-are-not-a-zip leaked
/// the whole package. LeakSanitizer under the `dfu-package` fuzz target found it. This check is the condition
/// under which ZIPFoundation's own scan (`Archive.scanForEndOfCentralDirectoryRecord`) fails: the last
/// `PK\u{5}\u{6}` signature at least 22 bytes before the end, and its comment length within the data.
enum ZIPEndRecord {
    static let size = 22
    static let signature: [UInt8] = [0x50, 0x4B, 0x05, 0x06]

    static func isReadable(in data: Data) -> Bool {
        guard data.count >= size else { return false }
        return data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Bool in
            var offset = bytes.count - size
            while offset >= 0 {
                if bytes[offset] == signature[0], bytes[offset + 1] == signature[1], bytes[offset + 2] == signature[2],
                   bytes[offset + 3] == signature[3] {
                    let commentLength = Int(bytes[offset + 20]) | Int(bytes[offset + 21]) << 8
                    return offset + size + commentLength <= bytes.count
                }
                offset -= 1
            }
            return false
        }
    }
}
