import Foundation
import SimulatedWearables
import Testing
import ZIPFoundation

@testable import Firmware

/// `ZIPArchive`, the package reader on the system's zlib, against ZIPFoundation (an independent reader and the writer
/// of `DFUPackageBuilder`'s packages): the same entries and bytes, the same inputs that are not a zip, and every
/// damaged layout an error with its reason, never a trap.
@Suite("ZIP archive")
struct ZIPArchiveTests {
    static let package = DFUPackageBuilder.application(firmware: Array(repeating: 0xA5, count: 300), firmwareVersion: 2)

    /// Whether ZIPFoundation finds an end record (an input it refuses leaks here: small ones, in a test only).
    static func zipFoundationOpens(_ bytes: [UInt8]) -> Bool {
        (try? Archive(data: Data(bytes), accessMode: .read, pathEncoding: nil)) != nil
    }

    static func offsets(of signature: [UInt8], in bytes: [UInt8]) -> [Int] {
        (0...(bytes.count - signature.count)).filter { Array(bytes[$0..<($0 + signature.count)]) == signature }
    }

    static func writeU32(_ value: UInt32, at offset: Int, in bytes: inout [UInt8]) {
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(index))) }
    }

    static func archiveError(_ bytes: [UInt8]) -> DFUPackageError? {
        do {
            let archive = try ZIPArchive(bytes: bytes, expandingAtMost: 1 << 20)
            for entry in archive.entries where entry.kind == .file { _ = try archive.contents(of: entry) }
            return nil
        } catch {
            return error
        }
    }

    @Test("'not a zip' is exactly what ZIPFoundation finds no end record in: every shortening, a damaged comment length")
    func notAZipAgreesWithZIPFoundation() {
        var inputs: [[UInt8]] = [Self.package, [], Array(Self.package.suffix(22))]
        inputs += (1...40).map { Array(Self.package.dropLast($0)) }
        var commentTooLong = Self.package
        commentTooLong[commentTooLong.count - 2] = 0x10
        var commentShorter = Self.package + [0x41, 0x42]
        commentShorter[commentShorter.count - 4] = 0x01
        inputs += [commentTooLong, commentShorter, Array("PK\u{5}\u{6}".utf8) + Array(repeating: 0, count: 18)]
        for input in inputs {
            let notAZip = Self.archiveError(input) == .notAZip
            #expect(notAZip == !Self.zipFoundationOpens(input), "\(input.count) bytes")
        }
    }

    @Test("stored and deflated entries read as ZIPFoundation reads them: names, order and bytes")
    func entriesAgreeWithZIPFoundation() throws {
        var random = SimulationRandom(seed: 43)
        let files: [(name: String, contents: [UInt8])] = [
            ("manifest.json", Array(#"{"manifest":{}}"#.utf8)), ("empty.dat", []),
            ("noise.bin", (0..<5000).map { _ in UInt8.random(in: 0...255, using: &random) }),
            ("zeros.bin", [UInt8](repeating: 0, count: 70_000)), ("folder/inner.txt", Array("inner".utf8)),
        ]
        for compressed in [false, true] {
            let zip = DFUPackageBuilder.zip(files, compressed: compressed)
            let archive = try ZIPArchive(bytes: zip, expandingAtMost: 1 << 20)
            let reference = try Archive(data: Data(zip), accessMode: .read, pathEncoding: nil)
            #expect(archive.entries.map(\.name) == reference.map(\.path))
            for entry in reference {
                var expected: [UInt8] = []
                _ = try reference.extract(entry) { expected += $0 }
                let mine = try #require(archive.entries.first { $0.name == entry.path })
                #expect(try archive.contents(of: mine) == expected, "\(entry.path), compressed: \(compressed)")
            }
        }
    }

    @Test("every truncation and 2,000 seeded corruptions of a deflated package are errors or reads, never traps")
    func damagedInputs() {
        let image = DFUPackageBuilder.Image.described(.application, firmware: Array(repeating: 0x5A, count: 2000), firmwareVersion: 1)
        let zip = DFUPackageBuilder.package([image], compressed: true)
        for length in 0..<zip.count {
            #expect(Self.archiveError(Array(zip.prefix(length))) != nil, "\(length) bytes")
            #expect(throws: DFUPackageError.self) { try DFUPackage(data: Array(zip.prefix(length)), maximumSize: 1 << 20) }
        }
        var random = SimulationRandom(seed: 6)
        for _ in 0..<2000 {
            var damaged = zip
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                damaged[Int.random(in: 0..<damaged.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            _ = Self.archiveError(damaged)
            _ = try? DFUPackage(data: damaged, maximumSize: 1 << 20)
        }
    }

    /// Before the reader checked it this trapped inside ZIPFoundation (the fuzzer's input had the same shape).
    @Test("an entry whose local header lies past the end is refused, not read")
    func localHeaderPastTheEnd() throws {
        var bytes = Self.package
        let entry = try #require(Self.offsets(of: [0x50, 0x4B, 0x01, 0x02], in: bytes).first)
        Self.writeU32(0x00FF_FFFF, at: entry + 42, in: &bytes)
        #expect(throws: DFUPackageError.unsupportedZip("an entry's data lies past its end")) {
            try DFUPackage(data: bytes, maximumSize: 1 << 20)
        }
    }

    @Test("a central directory past the end, ZIP64, encryption, other methods and duplicate names are refused with the reason")
    func unsupportedLayouts() throws {
        let end = try #require(Self.offsets(of: [0x50, 0x4B, 0x05, 0x06], in: Self.package).last)
        let entry = try #require(Self.offsets(of: [0x50, 0x4B, 0x01, 0x02], in: Self.package).first)
        var directoryPastTheEnd = Self.package
        Self.writeU32(0x0100_0000, at: end + 16, in: &directoryPastTheEnd)
        #expect(Self.archiveError(directoryPastTheEnd) == .unsupportedZip("its central directory lies past its end"))

        var zip64 = Self.package
        Self.writeU32(0xFFFF_FFFF, at: end + 12, in: &zip64)
        #expect(Self.archiveError(zip64) == .unsupportedZip("ZIP64"))
        var zip64Entry = Self.package
        Self.writeU32(0xFFFF_FFFF, at: entry + 24, in: &zip64Entry)
        #expect(Self.archiveError(zip64Entry) == .unsupportedZip("ZIP64"))

        let firstName = try ZIPArchive(bytes: Self.package, expandingAtMost: 1 << 20).entries[0].name
        var encrypted = Self.package
        encrypted[entry + 8] |= 0x01
        #expect(Self.archiveError(encrypted) == .unsupportedZip("\(firstName) is encrypted"))
        var bzip2 = Self.package
        bzip2[entry + 10] = 12
        #expect(Self.archiveError(bzip2) == .unsupportedZip("\(firstName) is compressed with method 12, not deflate"))

        let twice = DFUPackageBuilder.zip([("a.bin", [1]), ("a.bin", [2])])
        #expect(Self.archiveError(twice) == .unsupportedZip("it holds two entries named a.bin"))
    }

    @Test("a streamed zip (data descriptors) reads: the central directory holds the sizes")
    func dataDescriptors() throws {
        var streamed = Self.package
        for offset in Self.offsets(of: [0x50, 0x4B, 0x01, 0x02], in: streamed) { streamed[offset + 8] |= 0x08 }
        for offset in Self.offsets(of: [0x50, 0x4B, 0x03, 0x04], in: streamed) { streamed[offset + 6] |= 0x08 }
        #expect(try DFUPackage(data: streamed, maximumSize: 1 << 20) == DFUPackage(data: Self.package, maximumSize: 1 << 20))
    }

    @Test("a folder or a symbolic link where the manifest names a file is refused")
    func notAFile() throws {
        let image = DFUPackageBuilder.Image.described(.application, firmware: [1, 2, 3], firmwareVersion: 1)
        let zip = DFUPackageBuilder.package([image])
        let names = try ZIPArchive(bytes: zip, expandingAtMost: 1 << 20).entries.map(\.name)
        let bin = try #require(names.first { $0.hasSuffix(".bin") })
        // Made on Unix (host 3) with the mode of a symbolic link in the external attributes.
        var link = zip
        for offset in Self.offsets(of: [0x50, 0x4B, 0x01, 0x02], in: link)
        where String(decoding: link[(offset + 46)..<(offset + 46 + bin.utf8.count)], as: UTF8.self) == bin {
            link[offset + 5] = 3
            Self.writeU32(0o120777 << 16, at: offset + 38, in: &link)
        }
        #expect(throws: DFUPackageError.corruptEntry(name: bin, reason: "it is a symbolic link, not a file")) {
            try DFUPackage(data: link, maximumSize: 1 << 20)
        }
    }
}
