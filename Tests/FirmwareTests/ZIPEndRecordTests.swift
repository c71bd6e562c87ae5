import Foundation
import SimulatedWearables
import Testing
import ZIPFoundation

@testable import Firmware

/// `ZIPEndRecord` must refuse exactly what ZIPFoundation's in-memory `Archive` refuses for want of an end record —
/// the path on which it leaks the whole input (see `ZIPEndRecord`; LeakSanitizer in `Tests/fuzz/run dfu-package`
/// shows the leak when the check is taken out) — and nothing it accepts.
@Suite("ZIP end record")
struct ZIPEndRecordTests {
    static let package = DFUPackageBuilder.application(firmware: Array(repeating: 0xA5, count: 300), firmwareVersion: 2)

    /// Whether ZIPFoundation opens `bytes` (an input it refuses leaks here: small ones, in a test process only).
    static func zipFoundationOpens(_ bytes: [UInt8]) -> Bool {
        do {
            _ = try Archive(data: Data(bytes), accessMode: .read, pathEncoding: nil)
            return true
        } catch {
            return false
        }
    }

    @Test("agrees with ZIPFoundation on a package, every shortening of it, and its end record damaged")
    func agreesWithZIPFoundation() {
        var inputs: [[UInt8]] = [Self.package, [], Array(Self.package.suffix(22))]
        inputs += (1...40).map { Array(Self.package.dropLast($0)) }
        var commentTooLong = Self.package
        commentTooLong[commentTooLong.count - 2] = 0x10
        var commentShorter = Self.package + [0x41, 0x42]
        commentShorter[commentShorter.count - 4] = 0x01
        var noSignature = Self.package
        noSignature[noSignature.count - 22] = 0x00
        inputs += [commentTooLong, commentShorter, noSignature, Array("PK\u{5}\u{6}".utf8) + Array(repeating: 0, count: 18)]
        for input in inputs {
            #expect(ZIPEndRecord.isReadable(in: Data(input)) == Self.zipFoundationOpens(input), "\(input.count) bytes")
        }
    }

    @Test("a package opens, and bytes without an end record are not a zip")
    func packageOpens() throws {
        #expect(ZIPEndRecord.isReadable(in: Data(Self.package)))
        #expect(throws: DFUPackageError.notAZip) { try DFUPackage(data: Array(Self.package.dropLast(3)), maximumSize: 1 << 20) }
        #expect(throws: Never.self) { try DFUPackage(data: Self.package, maximumSize: 1 << 20) }
    }
}
