import Testing

@testable import Wearables
@testable import Firmware
@testable import SimulatedWearables

/// What Legacy DFU does for the packages and bootloaders beyond an SDK 11 application update, following
/// Android-DFU-Library's `LegacyDfuImpl.java` (the vectors are its bytes): a SoftDevice and bootloader image in one
/// transfer with mode 0x03 and both sizes (`performDfu`, lines 258–274, `writeImageSize`), and the DFU v1 fallback
/// for bootloaders older than SDK 7 — `OP_CODE_START_DFU_V1` `01` and `OP_CODE_INIT_DFU_PARAMS` `02` (lines 73–74),
/// the size alone (line 375), the init packet after `02` without Init-complete (lines 446–450), PRN 10 (line 471).
@Suite("Legacy DFU: SoftDevice+bootloader images and DFU v1 bootloaders")
struct LegacyDFUCompatibilityTests {
    static let softDevice: [UInt8] = (0..<8_192).map { UInt8(truncatingIfNeeded: $0 &* 5 &+ 1) }
    static let bootloader: [UInt8] = (0..<2_048).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 9) }
    static let application: [UInt8] = (0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }

    static var oldBootloader: LegacyDFUTarget {
        var configuration = LegacyDFUTarget.Configuration()
        configuration.speaksDFUVersion1 = true
        return LegacyDFUTarget(configuration: configuration)
    }

    // MARK: Bytes

    @Test("DFU v1 requests: Start is 01 alone, Init Parameters 02 alone; the size after it is one u32")
    func versionOneRequests() throws {
        #expect(LegacyDFURequest.startV1.encoded() == [0x01])
        #expect(LegacyDFURequest.initParametersV1.encoded() == [0x02])
        #expect(try LegacyDFURequest(decoding: [0x01]) == .startV1)
        #expect(try LegacyDFURequest(decoding: [0x02]) == .initParametersV1)
        #expect(LegacyDFURequest.startV1.opcode == .start && LegacyDFURequest.initParametersV1.opcode == .initParameters)
        #expect(LegacyDFUImageSizes.encodedV1(applicationSize: 3_000) == [0xB8, 0x0B, 0x00, 0x00])
    }

    @Test("every truncation and random bytes decode to a request or a typed error, never a crash; requests round-trip")
    func requestFuzz() {
        var random = SimulationRandom(seed: 0x1530)
        let valid: [[UInt8]] = [[0x01, 0x04], [0x01, 0x03], [0x02, 0x00], [0x02, 0x01], [0x08, 0x0C, 0x00], [0x07]]
        var inputs = valid.flatMap { bytes in (0...bytes.count).map { Array(bytes.prefix($0)) } }
        for _ in 0..<2_000 {
            inputs.append((0..<Int.random(in: 0...6, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
        for bytes in inputs {
            do {
                let request = try LegacyDFURequest(decoding: bytes)
                // What decodes encodes to the bytes it was read from (a longer write carries ignored extra bytes).
                #expect(Array(bytes.prefix(request.encoded().count)) == request.encoded(), "\(bytes)")
            } catch {
                switch error {
                case .truncated, .unknownIdentifier, .outOfRange: break
                default: Issue.record("\(bytes): \(error)")
                }
            }
            _ = try? LegacyDFUImageSizes(decoding: bytes)
            _ = try? LegacyDFUNotification(decoding: bytes)
        }
    }

    // MARK: SoftDevice and bootloader

    @Test("a SoftDevice+bootloader image goes in one transfer: Start 01 03 with sizes 8192, 2048, 0; it installs")
    func softDeviceAndBootloader() {
        let image = Self.softDevice + Self.bootloader
        var link = LegacyDFULink(target: LegacyDFUTarget())
        var client = LegacyDFUClient(initPacket: LegacyDFUInitPacket(for: image).encoded(), firmware: image,
                                     imageType: [.softDevice, .bootloader], softDeviceSize: Self.softDevice.count)
        #expect(link.run(&client) == .finished)
        #expect(link.controlWrites.first == [0x01, 0x03])
        #expect(link.packetWrites.first == [0x00, 0x20, 0, 0, 0x00, 0x08, 0, 0, 0, 0, 0, 0])
        #expect(link.target.installedImage == image)
        #expect(link.target.installedSizes == LegacyDFUImageSizes(softDevice: 8_192, bootloader: 2_048))
    }

    @Test("a SoftDevice+bootloader image without a valid split fails before anything is written")
    func softDeviceAndBootloaderWithoutSplit() {
        let image = Self.softDevice + Self.bootloader
        for split in [nil, 0, image.count, image.count + 4] as [Int?] {
            var client = LegacyDFUClient(initPacket: LegacyDFUInitPacket(for: image).encoded(), firmware: image,
                                         imageType: [.softDevice, .bootloader], softDeviceSize: split)
            let actions = client.start()
            #expect(actions == [.failed(.missingImageSplit(imageBytes: image.count, softDeviceBytes: split))])
            #expect(LegacyDFUError.missingImageSplit(imageBytes: image.count, softDeviceBytes: split).description
                .contains("sd_size"))
        }
    }

    // MARK: DFU v1

    @Test("a bootloader older than SDK 7 refuses Start 01 04; the client switches to DFU v1, PRN 10, and installs")
    func versionOneFallback() throws {
        let initPacket = LegacyDFUInitPacket(for: Self.application, applicationVersion: 20301).encoded()
        var link = LegacyDFULink(target: Self.oldBootloader)
        var client = LegacyDFUClient(initPacket: initPacket, firmware: Self.application)
        #expect(link.run(&client) == .finished)
        #expect(link.controlWrites == [[0x01, 0x04], [0x01], [0x02], [0x08, 0x0A, 0x00], [0x03], [0x04], [0x05]])
        #expect(link.packetWrites[0] == LegacyDFUImageSizes(application: 3_000).encoded())
        #expect(link.packetWrites[1] == [0xB8, 0x0B, 0x00, 0x00])
        #expect(link.packetWrites[2] == initPacket)
        #expect(link.target.installedImage == Self.application)
        #expect(link.target.installedInitPacket?.applicationVersion == 20301)
        #expect(link.target.versionValue == nil, "no version characteristic before SDK 7")
        // 150 packets, the last answered instead of counted: a receipt after every 10th of the first 149.
        #expect(link.receipts == 14)
    }

    @Test("DFU v1 keeps a receipt interval of 1…10 and replaces 0 or more than 10 with 10")
    func versionOneReceiptInterval() {
        for (asked, used) in [(UInt16(4), UInt16(4)), (0, 10), (12, 10), (10, 10)] {
            var link = LegacyDFULink(target: Self.oldBootloader)
            var client = LegacyDFUClient(initPacket: LegacyDFUInitPacket(for: Self.application).encoded(),
                                         firmware: Self.application, packetReceiptInterval: asked)
            #expect(link.run(&client) == .finished)
            #expect(link.controlWrites.contains(LegacyDFURequest.packetReceiptNotificationRequest(used).encoded()))
        }
    }

    @Test("an init packet of SDK 4.3–6, the CRC-16 alone, is checked against the image by the old bootloader")
    func bareCRCInitPacket() {
        let crc = LegacyDFUImageCRC.checksum(Self.application)
        var link = LegacyDFULink(target: Self.oldBootloader)
        var client = LegacyDFUClient(initPacket: [UInt8(crc & 0xFF), UInt8(crc >> 8)], firmware: Self.application)
        #expect(link.run(&client) == .finished)
        #expect(link.target.installedImage == Self.application)
        #expect(link.target.installedInitPacket == nil)

        var wrong = LegacyDFULink(target: Self.oldBootloader)
        var other = LegacyDFUClient(initPacket: [UInt8(crc & 0xFF) ^ 1, UInt8(crc >> 8)], firmware: Self.application)
        #expect(wrong.run(&other) == .failed(.remote(.crcError, request: .validate)))
    }

    @Test("a SoftDevice or bootloader refused by an old bootloader fails with NOT_SUPPORTED, as in Nordic's library")
    func versionOneTakesApplicationsOnly() {
        let image = Self.softDevice + Self.bootloader
        var link = LegacyDFULink(target: Self.oldBootloader)
        var client = LegacyDFUClient(initPacket: LegacyDFUInitPacket(for: image).encoded(), firmware: image,
                                     imageType: [.softDevice, .bootloader], softDeviceSize: Self.softDevice.count)
        #expect(link.run(&client) == .failed(.remote(.notSupported, request: .start)))
        #expect(link.controlWrites == [[0x01, 0x03], [0x06]])
    }

    @Test("an SDK 11 bootloader answers the v1 requests NOT_SUPPORTED; an old one the SDK 7 init framing")
    func requestsOfTheOtherGeneration() {
        var sdk11 = LegacyDFUTarget()
        #expect(sdk11.writeControlPoint([0x01]).isEmpty)
        #expect(sdk11.writePacket([0xB8, 0x0B, 0x00, 0x00]) == [.notify([0x10, 0x01, 0x03])])
        #expect(sdk11.writeControlPoint([0x02]) == [.notify([0x10, 0x02, 0x03])])

        var old = Self.oldBootloader
        #expect(old.writeControlPoint([0x01]).isEmpty)
        #expect(old.writePacket([0xB8, 0x0B, 0x00, 0x00]) == [.notify([0x10, 0x01, 0x01])])
        #expect(old.writeControlPoint([0x02, 0x00]) == [.notify([0x10, 0x02, 0x03])])
        #expect(old.writeControlPoint([0x02]).isEmpty)
        #expect(old.writePacket([0x01]) == [.notify([0x10, 0x02, 0x06])], "one byte is no CRC-16")
    }
}
