import Foundation
import MQTT
import Testing
import Wear2MQTTTesting

/// `readWholeFile` replaces Foundation's whole-file reads, which leak 4 KiB per empty file read (swift-foundation in
/// Swift 6.3; LeakSanitizer shows it, docs/reliability.md "Sanitizers"). What it must read: everything, empty
/// files as empty (not as missing), files whose size `fstat` does not know, and nothing for a missing path.
@Suite("Whole-file reads")
struct WholeFileReadTests {
    @Test("an empty file is empty, a missing one nil, a folder nil")
    func emptyMissingAndFolder() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let empty = try folder.write("empty", "")
        #expect(readWholeFile(atPath: empty) == [])
        #expect(readWholeTextFile(atPath: empty) == "")
        #expect(readWholeFile(atPath: folder.file("missing")) == nil)
        #expect(readWholeFile(atPath: folder.path) == nil)
    }

    @Test("every byte of files around the chunk sizes, in order", arguments: [1, 4095, 4096, 4097, 65_536, 200_001])
    func wholeContent(size: Int) throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
        let path = folder.file("data")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        #expect(readWholeFile(atPath: path) == bytes)
    }

    @Test("a /proc file, whose size fstat gives as 0, reads whole")
    func procFile() throws {
        let text = try #require(readWholeTextFile(atPath: "/proc/self/status"))
        #expect(text.contains("VmRSS:") && text.hasSuffix("\n"))
    }

    @Test("text with invalid UTF-8 reads, repaired")
    func invalidText() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let path = folder.file("bad")
        #expect(FileManager.default.createFile(atPath: path, contents: Data([0x61, 0xFF, 0x62])))
        #expect(readWholeTextFile(atPath: path) == "a\u{FFFD}b")
    }
}
