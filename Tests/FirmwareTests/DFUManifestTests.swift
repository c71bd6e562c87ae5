import Foundation
import Testing

@testable import Wearables
@testable import Firmware
@testable import SimulatedWearables

/// The manifest keys of every package nrfutil has written, read as Nordic's libraries read them: `sd_size` /
/// `bl_size` in the entry (nrfutil 0.5, adafruit-nrfutil) or in `info_read_only_metadata` (later nrfutil), as
/// iOS-DFU-Library's `SoftDeviceBootloaderInfo` does; the combined `*_application` keys of Android-DFU-Library's
/// `Manifest.java`, sent as the application part, last.
@Suite("DFU manifest: sizes and image kinds of every nrfutil")
struct DFUManifestTests {
    static let limit = 1 << 20
    static let systemImage: [UInt8] = (0..<10_240).map { UInt8(truncatingIfNeeded: $0 &* 5 &+ 1) }
    static let application: [UInt8] = (0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
    static let legacyInit = LegacyDFUInitPacket(for: systemImage).encoded()

    /// A zip with `manifest` and the files it may name.
    static func package(_ manifest: String) -> [UInt8] {
        DFUPackageBuilder.zip([
            ("manifest.json", Array(manifest.utf8)), ("sd_bl.bin", systemImage), ("sd_bl.dat", legacyInit),
            ("app.bin", application), ("app.dat", LegacyDFUInitPacket(for: application).encoded()),
        ])
    }

    static func read(_ manifest: String) throws(DFUPackageError) -> DFUPackage {
        try DFUPackage(data: package(manifest), maximumSize: limit)
    }

    @Test("adafruit-nrfutil / nrfutil 0.5: sd_size and bl_size in the softdevice_bootloader entry itself")
    func directSizes() throws {
        let package = try Self.read("""
            {"manifest": {"dfu_version": 0.5, "softdevice_bootloader": {"bin_file": "sd_bl.bin", "bl_size": 2048,
             "dat_file": "sd_bl.dat", "sd_size": 8192}}}
            """)
        #expect(package.images.map(\.kind) == [.softDeviceBootloader])
        #expect(package.images[0].softDeviceSize == 8_192 && package.images[0].bootloaderSize == 2_048)
    }

    @Test("both places agreeing is fine; disagreeing, or summing to another size than the image, is invalid")
    func sizesInBothPlaces() throws {
        let agreeing = try Self.read("""
            {"manifest": {"softdevice_bootloader": {"bin_file": "sd_bl.bin", "dat_file": "sd_bl.dat", "sd_size": 8192,
             "bl_size": 2048, "info_read_only_metadata": {"sd_size": 8192, "bl_size": 2048}}}}
            """)
        #expect(agreeing.images[0].softDeviceSize == 8_192)
        #expect(throws: DFUPackageError.invalidManifest(
            "\"softdevice_bootloader\" gives sd_size 4096, its info_read_only_metadata 8192")) {
            try Self.read("""
                {"manifest": {"softdevice_bootloader": {"bin_file": "sd_bl.bin", "dat_file": "sd_bl.dat",
                 "sd_size": 4096, "info_read_only_metadata": {"sd_size": 8192, "bl_size": 2048}}}}
                """)
        }
        #expect(throws: DFUPackageError.invalidManifest(
            "softdevice_bootloader says sd_size 8192 + bl_size 1024 bytes, but sd_bl.bin has 10240")) {
            try Self.read("""
                {"manifest": {"softdevice_bootloader": {"bin_file": "sd_bl.bin", "dat_file": "sd_bl.dat",
                 "sd_size": 8192, "bl_size": 1024}}}
                """)
        }
        #expect(throws: DFUPackageError.invalidManifest("\"softdevice_bootloader.bl_size\" is not a size in bytes")) {
            try Self.read("""
                {"manifest": {"softdevice_bootloader": {"bin_file": "sd_bl.bin", "dat_file": "sd_bl.dat", "bl_size": -4}}}
                """)
        }
    }

    @Test("softdevice_application, bootloader_application and softdevice_bootloader_application are the application part, sent last")
    func combinedKeys() throws {
        for key in ["softdevice_application", "bootloader_application", "softdevice_bootloader_application"] {
            let package = try Self.read("""
                {"manifest": {"\(key)": {"bin_file": "app.bin", "dat_file": "app.dat"},
                 "softdevice_bootloader": {"bin_file": "sd_bl.bin", "dat_file": "sd_bl.dat", "sd_size": 8192, "bl_size": 2048}}}
                """)
            let kind = try #require(DFUImageKind(rawValue: key))
            #expect(package.images.map(\.kind) == [.softDeviceBootloader, kind])
            #expect(kind.isApplicationPart && kind.isCombinedWithApplication)
        }
        #expect(!DFUImageKind.application.isCombinedWithApplication && DFUImageKind.application.isApplicationPart)
        #expect(!DFUImageKind.softDeviceBootloader.isApplicationPart)
    }

    @Test("a combined key's init packet is the bootloader's business: any Secure init packet type is accepted")
    func combinedInitPacketNotChecked() throws {
        let image = DFUPackageBuilder.Image(
            kind: .softDeviceApplication, firmware: Self.application,
            initPacket: DFUInitPacket(describing: Self.systemImage, as: .softDevice, firmwareVersion: 1,
                                      hardwareVersion: 52).encoded())
        let package = try DFUPackage(data: DFUPackageBuilder.package([image]), maximumSize: Self.limit)
        #expect(package.images.first?.parsedInit?.firmwareType == .softDevice)
    }

    @Test("two application parts are refused: Nordic's libraries would send one and drop the other")
    func twoApplicationParts() {
        #expect(throws: DFUPackageError.invalidManifest(
            "it names application and bootloader_application; a package carries one application part, the others "
                + "would never be sent")) {
            try Self.read("""
                {"manifest": {"application": {"bin_file": "app.bin", "dat_file": "app.dat"},
                 "bootloader_application": {"bin_file": "app.bin", "dat_file": "app.dat"}}}
                """)
        }
    }

    @Test("Legacy DFU refuses the combined keys and a SoftDevice+bootloader without its split before sending; Secure a Legacy .dat")
    func sendability() throws {
        let combined = try Self.read("""
            {"manifest": {"softdevice_application": {"bin_file": "app.bin", "dat_file": "app.dat"}}}
            """)
        #expect(throws: CommandError.self) { try NordicDFUTransfer.checkSendable(combined.images, mode: .legacyBootloader) }
        let unsplit = try Self.read("""
            {"manifest": {"softdevice_bootloader": {"bin_file": "sd_bl.bin", "dat_file": "sd_bl.dat"}}}
            """)
        do {
            try NordicDFUTransfer.checkSendable(unsplit.images, mode: .legacyApplication)
            Issue.record("an unsplit SoftDevice+bootloader was accepted for Legacy DFU")
        } catch {
            #expect(error.code == .dfuFailed && error.message.contains("sd_size"), "\(error)")
        }
        let split = try Self.read("""
            {"manifest": {"softdevice_bootloader": {"bin_file": "sd_bl.bin", "dat_file": "sd_bl.dat", "sd_size": 8192,
             "bl_size": 2048}, "application": {"bin_file": "app.bin", "dat_file": "app.dat"}}}
            """)
        try NordicDFUTransfer.checkSendable(split.images, mode: .legacyBootloader)
        #expect(throws: CommandError.self) { try NordicDFUTransfer.checkSendable(split.images, mode: .secureBootloader) }
    }

    @Test("random bytes, every truncation of a package and mangled manifests end in a DFUPackageError, never a crash")
    func fuzz() {
        var random = SimulationRandom(seed: 0xDF0)
        let valid = Self.package("""
            {"manifest": {"softdevice_bootloader": {"bin_file": "sd_bl.bin", "dat_file": "sd_bl.dat", "sd_size": 8192,
             "bl_size": 2048}, "application": {"bin_file": "app.bin", "dat_file": "app.dat"}}}
            """)
        #expect((try? DFUPackage(data: valid, maximumSize: Self.limit))?.images.count == 2)
        var inputs: [[UInt8]] = stride(from: 0, to: valid.count, by: 97).map { Array(valid.prefix($0)) }
        for _ in 0..<300 {
            inputs.append((0..<Int.random(in: 0...512, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
            var flipped = valid
            flipped[Int.random(in: 0..<valid.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
            inputs.append(flipped)
        }
        let manifest = Array("""
            {"manifest": {"softdevice_bootloader": {"bin_file": "sd_bl.bin", "dat_file": "sd_bl.dat", "sd_size": 8192,
             "bl_size": 2048, "info_read_only_metadata": {"sd_size": 8192}}, "application": {"bin_file": "app.bin",
             "dat_file": "app.dat"}}}
            """.utf8)
        var manifests = (0...manifest.count).map { Array(manifest.prefix($0)) }
        for _ in 0..<300 {
            var mangled = manifest
            mangled[Int.random(in: 0..<manifest.count, using: &random)] = UInt8.random(in: 0x20...0x7E, using: &random)
            manifests.append(mangled)
        }
        for bytes in inputs {
            do { _ = try DFUPackage(data: bytes, maximumSize: Self.limit) } catch { #expect(!error.message.isEmpty) }
        }
        for bytes in manifests {
            do { _ = try DFUManifest(json: bytes) } catch {
                guard case .invalidManifest = error else {
                    Issue.record("a manifest fails as invalidManifest, not \(error)")
                    continue
                }
            }
        }
    }
}
