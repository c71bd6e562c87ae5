import Foundation
import Testing
import ZIPFoundation

@testable import Wearables
@testable import Firmware
@testable import SimulatedWearables

/// `DFUPackageBuilder.legacyApplication` writes what nrfutil 0.5's `dfu genpkg` wrote, and `DFUPackage` reads it
/// back as a package whose `.dat` is not a Secure DFU init packet.
@Suite("Legacy DFU packages")
struct LegacyDFUPackageTests {
    static let image: [UInt8] = (0..<2_048).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ 3) }

    @Test("the zip holds the image, the legacy init packet and a manifest with dfu_version 0.5 and init_packet_data")
    func legacyPackage() throws {
        let bytes = DFUPackageBuilder.legacyApplication(firmware: Self.image, applicationVersion: 20200)
        let package = try DFUPackage(data: bytes, maximumSize: 1 << 20)
        let image = try #require(package.images.first)
        #expect(package.images.count == 1)
        #expect(image.kind == .application)
        #expect(image.firmware == Self.image)
        #expect(image.parsedInit == nil, "a legacy .dat is no protobuf")
        #expect(image.initPacketParseError != nil)
        let initPacket = try LegacyDFUInitPacket(decoding: image.initPacket)
        #expect(initPacket == LegacyDFUInitPacket(for: Self.image, applicationVersion: 20200))
        #expect(initPacket.imageCRC16 == LegacyDFUImageCRC.checksum(Self.image))

        let archive = try Archive(data: Data(bytes), accessMode: .read)
        var manifest = Data()
        _ = try archive.extract(try #require(archive["manifest.json"])) { manifest.append($0) }
        let json = try #require(try JSONSerialization.jsonObject(with: manifest) as? [String: Any])
        let top = try #require(json["manifest"] as? [String: Any])
        #expect((top["dfu_version"] as? NSNumber)?.doubleValue == 0.5)
        let application = try #require(top["application"] as? [String: Any])
        #expect(application["bin_file"] as? String == image.binFile)
        #expect(application["dat_file"] as? String == image.datFile)
        let data = try #require(application["init_packet_data"] as? [String: Any])
        #expect((data["application_version"] as? NSNumber)?.intValue == 20200)
        #expect((data["device_type"] as? NSNumber)?.intValue == 0xFFFF)
        #expect((data["device_revision"] as? NSNumber)?.intValue == 0xFFFF)
        #expect((data["firmware_crc16"] as? NSNumber)?.intValue == Int(initPacket.imageCRC16))
        #expect((data["softdevice_req"] as? [NSNumber])?.map(\.intValue) == [0xFFFE])
    }

    @Test("without a version the package says 0xFFFFFFFF, nrfutil's default")
    func unversioned() throws {
        let package = try DFUPackage(data: DFUPackageBuilder.legacyApplication(firmware: Self.image), maximumSize: 1 << 20)
        let initPacket = try LegacyDFUInitPacket(decoding: try #require(package.images.first).initPacket)
        #expect(initPacket.applicationVersion == 0xFFFF_FFFF)
    }
}
