import Testing

@testable import Wearables
@testable import SimulatedWearables
@testable import Firmware

/// The simulated Nordic bootloaders without a bus: the options a scenario gives, the version string an install
/// leaves, the init packet checks, and the pure clients run against the engines with the injected faults.
@Suite("Simulated Nordic DFU: options, versions, bootloader engines")
struct SimulatedDFUBootloaderTests {
    static let image: [UInt8] = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ $0 >> 7) }

    static func secureInitPacket(for image: [UInt8] = image, version: UInt32 = 20200,
                                 type: DFUInitPacket.FirmwareType = .application) -> [UInt8] {
        DFUInitPacket(describing: image, as: type, firmwareVersion: version, hardwareVersion: 52).encoded()
    }

    // MARK: Versions

    @Test("fw_version 20200 reads 2.2.0: major · 10000 + minor · 100 + patch, as nrfutil packs version strings")
    func packedVersions() {
        #expect(SimulatedFirmwareRevision.string(packed: 20200) == "2.2.0")
        #expect(SimulatedFirmwareRevision.string(packed: 10203) == "1.2.3")
        #expect(SimulatedFirmwareRevision.string(packed: 999) == "0.9.99")
        #expect(SimulatedFirmwareRevision.string(packed: 0) == "0.0.0")
        #expect(SimulatedFirmwareRevision.afterInstalling(version: 30001, current: "2.1.0+dfu.1", installCount: 2) == "3.0.1")
    }

    @Test("an unversioned image (0xFFFFFFFF) keeps the release and counts the install as build metadata")
    func unversionedImages() {
        #expect(SimulatedFirmwareRevision.afterInstalling(version: 0xFFFF_FFFF, current: "2.1.0", installCount: 1)
            == "2.1.0+dfu.1")
        #expect(SimulatedFirmwareRevision.afterInstalling(version: 0xFFFF_FFFF, current: "2.1.0+dfu.1", installCount: 2)
            == "2.1.0+dfu.2")
    }

    // MARK: Options

    private func options(_ values: [String: SimulationOptionValue]) throws(SimulatedDeviceConfigurationError) -> SimulatedDFUOptions {
        var reader = SimulationOptionReader(values)
        let options = try SimulatedDFUOptions(reading: &reader)
        try reader.rejectUnknownKeys()
        return options
    }

    @Test("options: the Secure faults dfu_execute_busy and dfu_corrupt_objects, the Legacy dfu_legacy_bootloader")
    func newerOptions() throws {
        let secure = try options(["dfu_execute_busy": .bool(true), "dfu_corrupt_objects": .int(2)])
        #expect(secure.faults == SimulatedDFUFaults(executeBusy: true, corruptObjects: 2))
        let legacy = try options(["dfu": .string("legacy"), "dfu_legacy_bootloader": .string("sdk6")])
        #expect(legacy.legacyBootloader == .sdk6)
        #expect(try options([:]).legacyBootloader == .sdk11)
        let refused: [([String: SimulationOptionValue], String)] = [
            (["dfu": .string("legacy"), "dfu_execute_busy": .bool(true)], "dfu_execute_busy"),
            (["dfu": .string("legacy"), "dfu_corrupt_objects": .int(1)], "dfu_corrupt_objects"),
            (["dfu_corrupt_objects": .int(6)], "dfu_corrupt_objects"),
            (["dfu_legacy_bootloader": .string("sdk6")], "dfu_legacy_bootloader"),
            (["dfu": .string("legacy"), "dfu_legacy_bootloader": .string("sdk5")], "dfu_legacy_bootloader"),
        ]
        for (values, key) in refused {
            do {
                _ = try options(values)
                Issue.record("\(values) was accepted")
            } catch {
                #expect(error.key == key, "\(values): \(error)")
            }
        }
    }

    @Test("options: secure by default without faults; legacy and none by name; faults as given")
    func optionDefaults() throws {
        #expect(try options([:]) == SimulatedDFUOptions(variant: .secure))
        #expect(try options(["dfu": .string("legacy")]).variant == .legacy)
        #expect(try options(["dfu": .string("none")]).variant == .none)
        #expect(try options(["dfu_drop_at": .double(0.4), "dfu_reject": .int(0x0B0C)])
            == SimulatedDFUOptions(variant: .secure, faults: SimulatedDFUFaults(dropAt: 0.4, reject: 0x0B0C)))
        #expect(try options(["dfu": .string("legacy"), "dfu_reject": .int(5)]).faults.reject == 5)
        #expect(try options(["dfu_drop_at": .int(0), "dfu_reject": .int(0)]).faults == SimulatedDFUFaults())
    }

    @Test("options: an unknown variant, a fraction above 1, a code outside the protocol's, a fault without DFU")
    func optionErrors() {
        let refused: [([String: SimulationOptionValue], String)] = [
            (["dfu": .string("buttonless")], "dfu"),
            (["dfu_drop_at": .double(1.5)], "dfu_drop_at"),
            (["dfu_reject": .int(1)], "dfu_reject"),
            (["dfu_reject": .int(0x0C)], "dfu_reject"),
            (["dfu_reject": .int(0x0A00)], "dfu_reject"),
            (["dfu": .string("legacy"), "dfu_reject": .int(0x0B0C)], "dfu_reject"),
            (["dfu": .string("none"), "dfu_drop_at": .double(0.5)], "dfu_drop_at"),
            (["dfu": .string("none"), "dfu_reject": .int(3)], "dfu_reject"),
        ]
        for (values, key) in refused {
            #expect(throws: SimulatedDeviceConfigurationError.self, "\(values)") { try options(values) }
            do {
                _ = try options(values)
            } catch {
                #expect(error.key == key, "\(values): \(error)")
            }
        }
    }

    @Test("a rejection code ≥ 0x0B00 is EXT_ERROR with the extended code, below it the result itself")
    func rejectionCodes() {
        let verification = SimulatedDFUFaults.secureRejection(0x0B0C)
        #expect(verification.result == .extendedError && verification.extended == .verificationFailed)
        let version = SimulatedDFUFaults.secureRejection(0x0B05)
        #expect(version.result == .extendedError && version.extended == .firmwareVersionFailure)
        let plain = SimulatedDFUFaults.secureRejection(0x03)
        #expect(plain.result == .invalidParameter && plain.extended == nil)
    }

    // MARK: The Secure init check

    @Test("init check: garbage is INVALID_OBJECT, an external application INIT_COMMAND_INVALID, other images their size")
    func secureInitCheck() {
        let (garbage, _) = SecureDFUBootloaderEngine.initCheck([0xFF, 0x00, 0x12])
        guard case .rejected(.invalidObject, nil) = garbage.outcome else {
            Issue.record("garbage: \(garbage.outcome)")
            return
        }
        let (external, _) = SecureDFUBootloaderEngine.initCheck(Self.secureInitPacket(type: .externalApplication))
        guard case .rejected(.extendedError, .initCommandInvalid?) = external.outcome else {
            Issue.record("external application: \(external.outcome)")
            return
        }
        let (bootloader, _) = SecureDFUBootloaderEngine.initCheck(Self.secureInitPacket(type: .bootloader))
        guard case .accepted(let bootloaderSize, _) = bootloader.outcome else {
            Issue.record("bootloader image: \(bootloader.outcome)")
            return
        }
        #expect(bootloaderSize == Self.image.count)
        let (application, packet) = SecureDFUBootloaderEngine.initCheck(Self.secureInitPacket())
        guard case .accepted(let size, let verify) = application.outcome else {
            Issue.record("application: \(application.outcome)")
            return
        }
        #expect(size == Self.image.count)
        #expect(packet?.firmwareVersion == 20200)
        #expect(verify(Self.image))
        var corrupted = Self.image
        corrupted[5_000] ^= 0x01
        #expect(!verify(corrupted), "the digest decides")
    }

    // MARK: Engines against the pure clients

    @Test("Secure: the client installs the image; the engine resets with its version and counted every byte once")
    func secureTransfer() {
        var link = EngineLink(SecureDFUBootloaderEngine(faults: SimulatedDFUFaults()))
        var client = SecureDFUClient(initPacket: Self.secureInitPacket(), firmware: Self.image, packetSize: 244)
        #expect(link.run(&client) == .finished)
        #expect(link.resets == [SimulatedDFUInstall(imageSize: Self.image.count, version: 20200)])
        #expect(link.engine.bytesReceived == Self.image.count)
    }

    @Test("Secure dfu_drop_at 0.4: the link drops once at 40 %, a new client resumes from Select and resends no object")
    func secureDropAndResume() {
        var link = EngineLink(SecureDFUBootloaderEngine(faults: SimulatedDFUFaults(dropAt: 0.4)))
        var first = SecureDFUClient(initPacket: Self.secureInitPacket(), firmware: Self.image, packetSize: 244)
        #expect(link.run(&first) == .linkDropped)
        #expect(link.engine.faults.dropAt == nil, "the fault fired")
        let atDrop = link.engine.bytesReceived
        #expect(atDrop >= 4_000 && atDrop < 4_000 + 244)
        link.engine.linkDropped()
        var second = SecureDFUClient(initPacket: Self.secureInitPacket(), firmware: Self.image, packetSize: 244)
        #expect(link.run(&second) == .finished)
        #expect(link.engine.bytesReceived == Self.image.count, "resumed where it was: nothing sent twice")
        #expect(link.resets.count == 1)
    }

    @Test("Secure dfu_reject: the first data Execute answers the code (plain or extended), once; the next transfer passes",
          arguments: [(0x0B0C, SecureDFUError.remote(.extendedError, extended: .verificationFailed)),
                      (0x08, SecureDFUError.remote(.operationNotPermitted, extended: nil))])
    func secureRejection(code: Int, expected: SecureDFUError) {
        var link = EngineLink(SecureDFUBootloaderEngine(faults: SimulatedDFUFaults(reject: code)))
        var client = SecureDFUClient(initPacket: Self.secureInitPacket(), firmware: Self.image, packetSize: 244)
        #expect(link.run(&client) == .failed(expected.commandError))
        #expect(link.engine.faults.reject == nil)
        #expect(link.engine.bytesReceived == 4_096, "refused at the first object's Execute")
        var again = SecureDFUClient(initPacket: Self.secureInitPacket(), firmware: Self.image, packetSize: 244)
        #expect(link.run(&again) == .finished)
        #expect(link.resets.count == 1)
    }

    @Test("Secure dfu_execute_busy: the image's last Execute answers INVALID_OBJECT once, the client repeats it")
    func secureBusyExecute() {
        var link = EngineLink(SecureDFUBootloaderEngine(faults: SimulatedDFUFaults(executeBusy: true)))
        var client = SecureDFUClient(initPacket: Self.secureInitPacket(), firmware: Self.image, packetSize: 244)
        #expect(link.run(&client) == .finished)
        #expect(link.resets == [SimulatedDFUInstall(imageSize: Self.image.count, version: 20200)])
        #expect(!link.engine.faults.executeBusy, "the fault fired and is not handed on")
    }

    @Test("Secure dfu_corrupt_objects 2: the first object needs its third attempt; 3 fails the transfer")
    func secureCorruptObjects() {
        var link = EngineLink(SecureDFUBootloaderEngine(faults: SimulatedDFUFaults(corruptObjects: 2)))
        var client = SecureDFUClient(initPacket: Self.secureInitPacket(), firmware: Self.image, packetSize: 244)
        #expect(link.run(&client) == .finished)
        #expect(link.engine.faults.corruptObjects == 0)
        #expect(link.resets.count == 1)

        var failing = EngineLink(SecureDFUBootloaderEngine(faults: SimulatedDFUFaults(corruptObjects: 3)))
        var second = SecureDFUClient(initPacket: Self.secureInitPacket(), firmware: Self.image, packetSize: 244)
        guard case .failed(let error) = failing.run(&second) else {
            Issue.record("three damaged attempts fail")
            return
        }
        #expect(error.code == .dfuFailed && error.message.contains("checksum mismatch"), "\(error)")
    }

    @Test("Secure: a SoftDevice+bootloader image installs as a system image that leaves the application invalid")
    func secureSystemImage() {
        var link = EngineLink(SecureDFUBootloaderEngine(faults: SimulatedDFUFaults()))
        let packet = DFUInitPacket(describing: Self.image, as: .softDeviceBootloader, firmwareVersion: 2,
                                   hardwareVersion: 52, softDeviceSizeOfCombined: 8_192)
        var client = SecureDFUClient(initPacket: packet.encoded(), firmware: Self.image, packetSize: 244)
        #expect(link.run(&client) == .finished)
        #expect(link.resets == [SimulatedDFUInstall(imageSize: Self.image.count, version: 2, isApplication: false,
                                                    containsSoftDevice: true)])
    }

    @Test("Legacy sdk6: no version characteristic; an application installs through the DFU v1 fallback")
    func legacyVersionOne() {
        var link = EngineLink(LegacyDFUBootloaderEngine(faults: SimulatedDFUFaults(), bootloader: .sdk6))
        #expect(link.engine.versionValue == nil)
        let initPacket = LegacyDFUInitPacket(for: Self.image, applicationVersion: 20200).encoded()
        var client = LegacyDFUClient(initPacket: initPacket, firmware: Self.image)
        #expect(link.run(&client) == .finished)
        #expect(link.resets == [SimulatedDFUInstall(imageSize: Self.image.count, version: 20200)])
    }

    @Test("Legacy: a SoftDevice+bootloader transfer installs as a system image with a SoftDevice")
    func legacySystemImage() {
        var link = EngineLink(LegacyDFUBootloaderEngine(faults: SimulatedDFUFaults()))
        let image = Array(Self.image.prefix(12_288))
        var client = LegacyDFUClient(initPacket: LegacyDFUInitPacket(for: image).encoded(), firmware: image,
                                     imageType: [.softDevice, .bootloader], softDeviceSize: 8_192)
        #expect(link.run(&client) == .finished)
        #expect(link.resets == [SimulatedDFUInstall(imageSize: image.count, version: 0xFFFF_FFFF, isApplication: false,
                                                    containsSoftDevice: true)])
    }

    @Test("Legacy: the client installs the image; the engine resets with the application version and answers 0.8")
    func legacyTransfer() {
        var link = EngineLink(LegacyDFUBootloaderEngine(faults: SimulatedDFUFaults()))
        #expect(link.engine.versionValue == [0x08, 0x00])
        let initPacket = LegacyDFUInitPacket(for: Self.image, applicationVersion: 20200).encoded()
        var client = LegacyDFUClient(initPacket: initPacket, firmware: Self.image)
        #expect(link.run(&client) == .finished)
        #expect(link.resets == [SimulatedDFUInstall(imageSize: Self.image.count, version: 20200)])
        #expect(link.engine.bytesReceived == Self.image.count)
    }

    @Test("Legacy dfu_reject 5: Validate answers CRC_ERROR once, the client resets the bootloader, no image installed")
    func legacyRejection() {
        var link = EngineLink(LegacyDFUBootloaderEngine(faults: SimulatedDFUFaults(reject: 5)))
        let initPacket = LegacyDFUInitPacket(for: Self.image).encoded()
        var client = LegacyDFUClient(initPacket: initPacket, firmware: Self.image)
        #expect(link.run(&client) == .failed(LegacyDFUError.remote(.crcError, request: .validate).commandError))
        #expect(link.resets == [nil], "Reset (06) goes back to the old application")
        #expect(link.engine.faults.reject == nil)
    }

    @Test("Legacy dfu_drop_at 0.5: the link drops at half the image and the transfer is abandoned")
    func legacyDrop() {
        var link = EngineLink(LegacyDFUBootloaderEngine(faults: SimulatedDFUFaults(dropAt: 0.5)))
        let initPacket = LegacyDFUInitPacket(for: Self.image).encoded()
        var client = LegacyDFUClient(initPacket: initPacket, firmware: Self.image)
        #expect(link.run(&client) == .linkDropped)
        link.engine.linkDropped()
        var again = LegacyDFUClient(initPacket: initPacket, firmware: Self.image)
        #expect(link.run(&again) == .finished, "a new transfer from Start")
        #expect(link.engine.bytesReceived >= Self.image.count + 5_000, "the first half was sent twice")
    }
}

/// Carries a pure client's steps to a bootloader engine and the engine's notifications back, in memory; stops at
/// the engine's injected link drop.
struct EngineLink<Engine: SimulatedDFUBootloaderEngine> {
    enum Ending: Equatable {
        case finished
        case failed(CommandError)
        case linkDropped
        /// The client waited with nothing to come: a bug either side.
        case stalled
    }

    var engine: Engine
    private(set) var resets: [SimulatedDFUInstall?] = []

    init(_ engine: Engine) { self.engine = engine }

    mutating func run(_ client: inout some DFUTransferClient) -> Ending {
        var notifications: [[UInt8]] = []
        var actions = client.start()
        while true {
            for action in actions {
                let outputs: [SimulatedDFUBootloaderOutput]
                switch action {
                case .writeControl(let bytes): outputs = engine.writeControlPoint(bytes)
                case .writePacket(let bytes): outputs = engine.writePacket(bytes)
                case .waitForNotification: outputs = []
                case .finished: return .finished
                case .failed(let error): return .failed(error.commandError)
                }
                for output in outputs {
                    switch output {
                    case .notify(let bytes): notifications.append(bytes)
                    case .dropLink: return .linkDropped
                    case .reset(let installed): resets.append(installed)
                    }
                }
            }
            guard !notifications.isEmpty else { return .stalled }
            actions = client.answer(notifications.removeFirst())
        }
    }
}
