import BlueZ
import Firmware
import Foundation
import Gateway
import SimulatedWearables
import Testing
import Wear2MQTTTesting
import Wearables

/// Packages made by tools nobody here wrote (`NordicPackageTools`: adafruit-nrfutil for Legacy DFU, Nordic's nrfutil
/// 6.1.7 for Secure DFU, signed and not), from Intel HEX images written here: each is read as its tool meant it and
/// installed on the simulated band's bootloader through the whole gateway in memory. A missing tool fails these
/// tests with the line that installs it. The end-to-end suite sends two of them through real processes.
@Suite("Gateway in memory: packages from adafruit-nrfutil and nrfutil")
struct FirmwarePackageCorpusTests {
    static let band = "C0:F1:70:00:00:01"
    static let address = BluetoothAddress(band)!
    static let application: [UInt8] = (0..<12_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 5) }
    static let softDevice: [UInt8] = (0..<8_192).map { UInt8(truncatingIfNeeded: $0 &* 5 &+ 1) }
    static let bootloader: [UInt8] = (0..<4_096).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 9) }

    // MARK: Read as their tools wrote them

    @Test("adafruit-nrfutil: sd_bl.bin with sd_size and bl_size in the entry, Legacy init packets with the CRC-16")
    func adafruitPackagesRead() async throws {
        let package = try DFUPackage(
            data: await NordicPackageTools.adafruitPackage(application: Self.application, applicationVersion: 20301,
                                                     softDevice: Self.softDevice, bootloader: Self.bootloader),
            maximumSize: 1 << 20)
        #expect(package.images.map(\.kind) == [.softDeviceBootloader, .application])
        let system = package.images[0], application = package.images[1]
        #expect(system.firmware == Self.softDevice + Self.bootloader)
        #expect(system.softDeviceSize == Self.softDevice.count && system.bootloaderSize == Self.bootloader.count)
        #expect(application.firmware == Self.application)
        for image in package.images {
            #expect(image.parsedInit == nil, "a Legacy .dat is no protobuf")
            let initPacket = try LegacyDFUInitPacket(decoding: image.initPacket)
            #expect(initPacket.imageCRC16 == LegacyDFUImageCRC.checksum(image.firmware))
            #expect(initPacket.applicationVersion == 20301 && initPacket.softDevices == [0xFFFE])
        }
        try NordicDFUTransfer.checkSendable(package.images, mode: .legacyBootloader)
    }

    @Test("nrfutil: Secure init packets describing each image, the split in info_read_only_metadata, signed when asked")
    func nordicPackagesRead() async throws {
        let unsigned = try DFUPackage(
            data: await NordicPackageTools.nordicPackage(application: Self.application, applicationVersion: 20200),
            maximumSize: 1 << 20)
        let applicationInit = try #require(unsigned.images.first?.parsedInit)
        #expect(unsigned.images.map(\.kind) == [.application])
        #expect(applicationInit.firmwareType == .application && applicationInit.firmwareVersion == 20200)
        #expect(!applicationInit.isSigned && applicationInit.expectedImageSize == Self.application.count)

        let signed = try DFUPackage(
            data: await NordicPackageTools.nordicPackage(application: Self.application, applicationVersion: 20200,
                                                   softDevice: Self.softDevice, bootloader: Self.bootloader,
                                                   signed: true),
            maximumSize: 1 << 20)
        #expect(signed.images.map(\.kind) == [.softDeviceBootloader, .application])
        #expect(signed.images[0].firmware == Self.softDevice + Self.bootloader)
        #expect(signed.images[0].softDeviceSize == Self.softDevice.count)
        #expect(signed.images[0].parsedInit?.firmwareType == .softDeviceBootloader)
        for image in signed.images {
            #expect(image.parsedInit?.isSigned == true && image.parsedInit?.signature?.bytes.count == 64)
        }
        try NordicDFUTransfer.checkSendable(signed.images, mode: .secureBootloader)
        #expect(throws: CommandError.self) { try NordicDFUTransfer.checkSendable(signed.images, mode: .legacyBootloader) }
    }

    // MARK: Installed through the gateway

    /// One package of the corpus, the band it goes to, and what the band runs afterwards.
    enum Case: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case adafruitApplication, adafruitApplicationOnSDK6, adafruitSoftDeviceBootloaderApplication
        case nrfutilApplication, nrfutilSignedApplicationWithFaults, nrfutilSignedSoftDeviceBootloaderApplication

        var testDescription: String { rawValue }

        func package() async throws -> [UInt8] {
            switch self {
            case .adafruitApplication, .adafruitApplicationOnSDK6:
                try await NordicPackageTools.adafruitPackage(application: FirmwarePackageCorpusTests.application, applicationVersion: 20301)
            case .adafruitSoftDeviceBootloaderApplication:
                try await NordicPackageTools.adafruitPackage(application: FirmwarePackageCorpusTests.application, applicationVersion: 20301,
                                                       softDevice: FirmwarePackageCorpusTests.softDevice, bootloader: FirmwarePackageCorpusTests.bootloader)
            case .nrfutilApplication:
                try await NordicPackageTools.nordicPackage(application: FirmwarePackageCorpusTests.application, applicationVersion: 20200)
            case .nrfutilSignedApplicationWithFaults:
                try await NordicPackageTools.nordicPackage(application: FirmwarePackageCorpusTests.application, applicationVersion: 20200, signed: true)
            case .nrfutilSignedSoftDeviceBootloaderApplication:
                try await NordicPackageTools.nordicPackage(application: FirmwarePackageCorpusTests.application, applicationVersion: 20200,
                                                     softDevice: FirmwarePackageCorpusTests.softDevice, bootloader: FirmwarePackageCorpusTests.bootloader, signed: true)
            }
        }

        var options: [String: SimulationOptionValue] {
            switch self {
            case .adafruitApplication, .adafruitSoftDeviceBootloaderApplication: ["dfu": .string("legacy")]
            case .adafruitApplicationOnSDK6: ["dfu": .string("legacy"), "dfu_legacy_bootloader": .string("sdk6")]
            case .nrfutilApplication, .nrfutilSignedSoftDeviceBootloaderApplication: [:]
            // Three attempts for the first object, one more Execute for the last: Android-DFU-Library's counts.
            case .nrfutilSignedApplicationWithFaults: ["dfu_execute_busy": .bool(true), "dfu_corrupt_objects": .int(2)]
            }
        }

        var firmware: String { rawValue.hasPrefix("adafruit") ? "2.3.1" : "2.2.0" }
        var images: Int { rawValue.contains("SoftDeviceBootloader") ? 2 : 1 }
    }

    @Test("each package installs on the simulated bootloader and the band comes back with its version",
          arguments: Case.allCases)
    func installs(_ corpus: Case) async throws {
        let package = try await corpus.package()
        let folder = try TemporaryDirectory(prefix: "wear2mqtt-dfu-corpus")
        defer { folder.remove() }
        try Data(package).write(to: URL(fileURLWithPath: folder.file("package.zip")))
        let gateway = try GatewayHarness(configuration: """
        devices:
          - address: "\(Self.band)"
            name: band
        dfu:
          dir: \(folder.path)
          max_mb: 1
        allow:
          dfu: true
        """)
        try await withStopping(gateway) { gateway in
            try gateway.addDevice("gofit_care_xc", address: Self.band,
                                  options: corpus.options.merging(["history_days": .int(0)]) { $1 })
            await gateway.start()
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("band")?["connection"]?.text == "connected" })

            let answer = try #require(await gateway.request(
                "band/request/dfu", #"{"file":"package.zip","sha256":"\#(DFUPackageFile.sha256(of: package))"}"#))
            #expect(answer["status"]?.text == "ok", "\(answer)")
            #expect(answer["data"]?["firmware"]?.text == corpus.firmware, "\(answer)")
            let shown = await gateway.central.inspect(Self.address)
            #expect(shown["dfu_updates"] == String(corpus.images) && shown["firmware"] == corpus.firmware, "\(shown)")
            #expect(shown["dfu_mode"] == "application")
            if corpus == .nrfutilSignedApplicationWithFaults {
                #expect(shown["dfu_injected_busy_executes"] == "1" && shown["dfu_injected_corruptions"] == "2", "\(shown)")
            }
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("band")?["firmware"]?.text == corpus.firmware })
        }
    }
}
