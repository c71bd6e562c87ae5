import Firmware
import Foundation
import Testing
import Wear2MQTTTesting
import Wearables

/// InfiniTime's release package (`pinetime-mcuboot-app-dfu-<version>.zip`) is what its build makes with
/// `adafruit-nrfutil dfu genpkg --dev-type 0x0052 --application <MCUBoot image>.hex` (`InfiniTimeOrg/InfiniTime`
/// `src/CMakeLists.txt`, the `BUILD_DFU` post-build step): a Legacy DFU package. This builds one the same way and
/// checks that `DFUPackage` reads it and that the Legacy client's first steps are the ones InfiniTime's
/// `DfuService.cpp` expects (docs/protocols/infinitime.md, "Firmware update").
@Suite("InfiniTime firmware packages")
struct InfiniTimeFirmwarePackageTests {
    /// An MCUBoot image as `imgtool.py create --header-size 32 --pad-header` starts it: the magic 0x96f3b83d
    /// (little-endian) and the rest of the 32-byte header, then the firmware.
    static let image: [UInt8] = [0x3D, 0xB8, 0xF3, 0x96] + Array(repeating: 0, count: 28)
        + (0..<6_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 7) }

    @Test("genpkg --dev-type 0x0052 makes a Legacy application package DFUPackage reads: bin, dat, manifest")
    func packageReads() async throws {
        let bytes = try await NordicPackageTools.adafruitPackage(application: Self.image, deviceType: 0x0052)
        let package = try DFUPackage(data: bytes, maximumSize: 1 << 20)
        #expect(package.images.count == 1)
        let application = try #require(package.images.first)
        #expect(application.kind == .application)
        #expect(application.firmware == Self.image)
        #expect(application.parsedInit == nil, "a Legacy .dat is no protobuf")
        let initPacket = try LegacyDFUInitPacket(decoding: application.initPacket)
        #expect(initPacket == LegacyDFUInitPacket(for: Self.image, deviceType: 0x0052))
        // InfiniTime reads the init packet from a single write of at most 20 bytes (DfuService.cpp,
        // WritePacketHandler, state Init): genpkg's is 14.
        #expect(application.initPacket.count == 14)
    }

    @Test("the Legacy client speaks InfiniTime's DfuService: Start 01 04, sizes with the application third, 20-byte packets")
    func clientMatchesDfuService() throws {
        let initPacket = LegacyDFUInitPacket(for: Self.image, deviceType: 0x0052).encoded()
        var client = LegacyDFUClient(initPacket: initPacket, firmware: Self.image)
        let size = UInt32(Self.image.count)
        #expect(client.start() == [
            .writeControl([0x01, 0x04]),
            .writePacket([0, 0, 0, 0, 0, 0, 0, 0, UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size >> 16), 0]),
            .waitForNotification,
        ])
        // DfuService answers the sizes with 10 01 01 once its flash is erased, then takes the init packet.
        let afterStart = client.handle(.notification([0x10, 0x01, 0x01]))
        #expect(afterStart.first == .writeControl([0x02, 0x00]))
        #expect(afterStart.contains(.writePacket(initPacket)))
        // DfuImage::Append asserts packets of at most 20 bytes; DfuImage::Init only accepts a chunk size of 20.
        #expect(client.packetSize == 20)
        // The receipt interval is read as one byte (ControlPointHandler: nbPacketsToNotify = om_data[1]).
        #expect((1...255).contains(client.packetReceiptInterval))
        // InfiniTime's version characteristic answers 0x0008, which the gateway takes as a bootloader: the
        // transfer starts in the application itself, without a reboot.
        #expect(try LegacyDFUVersion(decoding: [0x08, 0x00]) == .sdk11)
    }
}
