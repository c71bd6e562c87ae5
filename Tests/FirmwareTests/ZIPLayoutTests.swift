import Foundation
import SimulatedWearables
import Testing
import ZIPFoundation

@testable import Firmware

/// `ZIPLayout` stands between hostile bytes and ZIPFoundation's in-memory reader, which traps on a seek past the
/// end and leaks an input without an end record (see `ZIPLayout`; both found by `Tests/fuzz/run dfu-package`).
@Suite("ZIP layout check")
struct ZIPLayoutTests {
    static let package = DFUPackageBuilder.application(firmware: Array(repeating: 0xA5, count: 300), firmwareVersion: 2)

    /// Whether ZIPFoundation finds an end record (an input it refuses leaks here: small ones, in a test only).
    static func zipFoundationOpens(_ bytes: [UInt8]) -> Bool {
        do {
            _ = try Archive(data: Data(bytes), accessMode: .read, pathEncoding: nil)
            return true
        } catch {
            return false
        }
    }

    static func offsets(of signature: [UInt8], in bytes: [UInt8]) -> [Int] {
        (0...(bytes.count - signature.count)).filter { Array(bytes[$0..<($0 + signature.count)]) == signature }
    }

    static func writeU32(_ value: UInt32, at offset: Int, in bytes: inout [UInt8]) {
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(index))) }
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
            let notAZip = ZIPLayout.check(Data(input)) == .notAZip
            #expect(notAZip == !Self.zipFoundationOpens(input), "\(input.count) bytes")
        }
    }

    @Test("a package nrfutil would write passes, and reads")
    func packagePasses() {
        #expect(ZIPLayout.check(Data(Self.package)) == nil)
        #expect(throws: Never.self) { try DFUPackage(data: Self.package, maximumSize: 1 << 20) }
    }

    /// Before the check this trapped inside ZIPFoundation (the fuzzer's input had the same shape).
    @Test("an entry whose local header lies past the end is refused, not read")
    func localHeaderPastTheEnd() throws {
        var bytes = Self.package
        let entry = try #require(Self.offsets(of: [0x50, 0x4B, 0x01, 0x02], in: bytes).first)
        Self.writeU32(0x00FF_FFFF, at: entry + 42, in: &bytes)
        #expect(throws: DFUPackageError.unsupportedZip("an entry's data lies past its end")) {
            try DFUPackage(data: bytes, maximumSize: 1 << 20)
        }
    }

    @Test("a central directory past the end, ZIP64 and data descriptors are refused with the reason")
    func unsupportedLayouts() throws {
        let end = try #require(Self.offsets(of: [0x50, 0x4B, 0x05, 0x06], in: Self.package).last)
        var directoryPastTheEnd = Self.package
        Self.writeU32(0x0100_0000, at: end + 16, in: &directoryPastTheEnd)
        #expect(ZIPLayout.check(Data(directoryPastTheEnd)) == .unsupported("its central directory lies past its end"))

        var zip64 = Self.package
        Self.writeU32(0xFFFF_FFFF, at: end + 12, in: &zip64)
        #expect(ZIPLayout.check(Data(zip64)) == .unsupported("ZIP64"))

        var descriptor = Self.package
        let entry = try #require(Self.offsets(of: [0x50, 0x4B, 0x01, 0x02], in: descriptor).first)
        descriptor[entry + 8] |= 0x08
        #expect(ZIPLayout.check(Data(descriptor)) == .unsupported("data descriptors (a streamed zip)"))
    }
}
