#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The whole content of the file at `path`, or nil when it cannot be opened or read.
///
/// Foundation's `FileManager.contents(atPath:)`, `Data(contentsOf:)` and `String(contentsOfFile:)` (swift-foundation
/// in Swift 6.3) leak a 4 KiB buffer every time they read an empty file (LeakSanitizer, docs/reliability.md
/// "Sanitizers"), and the gateway reads files that can be empty: a fresh spool segment, a state file cut short.
/// Reads until end of file rather than trusting the size `fstat` gives, so `/proc` files read whole too.
package func readWholeFile(atPath path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var status = stat()
    // One read for a file whose size is known (one byte more sees its end), then 64 KiB at a time.
    var chunkSize = fstat(fd, &status) == 0 ? max(Int(status.st_size) + 1, 4096) : 4096
    var bytes: [UInt8] = []
    while true {
        var failure: Int32 = 0
        let chunk = [UInt8](unsafeUninitializedCapacity: chunkSize) { buffer, initialized in
            initialized = 0
            while true {
                let count = read(fd, buffer.baseAddress, buffer.count)
                if count >= 0 { initialized = count; return }
                if errno != EINTR { failure = errno; return }
            }
        }
        if failure != 0 { return nil }
        if chunk.isEmpty { return bytes }
        if bytes.isEmpty { bytes = chunk } else { bytes += chunk }
        chunkSize = 65536
    }
}

/// The whole file as UTF-8 text (invalid sequences repaired), or nil when it cannot be read.
package func readWholeTextFile(atPath path: String) -> String? {
    readWholeFile(atPath: path).map { String(decoding: $0, as: UTF8.self) }
}
