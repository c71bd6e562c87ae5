import BlueZ
import DBus
import Simulator
import Testing
import Wear2MQTTTesting
@testable import Wearables
@testable import SimulatedWearables
@testable import Firmware

/// A firmware update of the simulated Care-Xc through the BlueZ D-Bus API, as the gateway runs it: the application
/// is asked to reboot, its bootloader shows up under the next address, a pure DFU client sends the image, and the
/// band comes back with the new Firmware Revision.
@Suite(.timeLimit(.minutes(2)))
struct NordicDFUSimulationTests {
    static let image: [UInt8] = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ $0 >> 6) }
    static let secureInitPacket = DFUInitPacket(describing: image, as: .application, firmwareVersion: 20200,
                                                hardwareVersion: 52).encoded()
    static let legacyInitPacket = LegacyDFUInitPacket(for: image, applicationVersion: 20301).encoded()

    static func secureClient() -> SecureDFUClient {
        SecureDFUClient(initPacket: secureInitPacket, firmware: image, packetSize: SecureDFUClient.packetSize(forATTMTU: 247))
    }

    /// Connects to the band and asks its application to reboot into the Secure DFU bootloader: the write needs
    /// indications, is indicated `20 01 01`, and the band's link drops.
    static func enterSecureBootloader(_ stack: DFUStack, method: NotifyMethod) async throws {
        let band = try await stack.connect(DFUStack.band)
        let buttonless = try stack.characteristic(band, service: SecureDFUUUID.service, SecureDFUUUID.buttonlessWithoutBonds)
        do {
            try await stack.bluez.write(buttonless.path, SecureDFUButtonless.enterBootloaderRequest)
            Issue.record("Enter Bootloader without indications was accepted")
        } catch {
            #expect(error.attErrorCode == 0xFD, "CCCD improperly configured: \(error)")
        }
        let indications = try await stack.subscribe(buttonless, method: method)
        defer { indications.close() }
        try await stack.bluez.write(buttonless.path, SecureDFUButtonless.enterBootloaderRequest)
        #expect(await indications.next(within: .seconds(5)) == [0x20, 0x01, 0x01])
        #expect(await stack.disconnected(band), "the band resets")
    }

    /// Connects to the band and writes Start DFU to its application's Legacy DFU service, with notifications on:
    /// the band's link drops.
    static func enterLegacyBootloader(_ stack: DFUStack) async throws {
        let band = try await stack.connect(DFUStack.band)
        let control = try stack.characteristic(band, service: LegacyDFUUUID.service, LegacyDFUUUID.controlPoint)
        let notifications = try await stack.subscribe(control, method: .acquire)
        defer { notifications.close() }
        try await stack.bluez.write(control.path, LegacyDFURequest.start(.application).encoded())
        #expect(await stack.disconnected(band), "the application jumps to its bootloader")
    }

    /// Connects to the bootloader and runs one client of `variant` over it.
    static func runBootloader(_ stack: DFUStack, _ client: inout some DFUTransferClient,
                              _ variant: SimulatedDFUOptions.Variant = .secure,
                              method: NotifyMethod = .acquire) async throws -> DFUStack.Outcome {
        let (service, control, packet) = variant == .legacy
            ? (LegacyDFUUUID.service, LegacyDFUUUID.controlPoint, LegacyDFUUUID.packet)
            : (SecureDFUUUID.service, SecureDFUUUID.controlPoint, SecureDFUUUID.packet)
        let bootloader = try await stack.connect(DFUStack.bootloader)
        let controlPoint = try stack.characteristic(bootloader, service: service, control)
        let packetCharacteristic = try stack.characteristic(bootloader, service: service, packet)
        let answers = try await stack.subscribe(controlPoint, method: method)
        defer { answers.close() }
        return try await stack.transfer(&client, device: bootloader, control: controlPoint, packet: packetCharacteristic,
                                        answers: answers)
    }

    /// After the bootloader reset: it is gone, and the band, connected again, reads `firmware`.
    static func expectBandBack(_ stack: DFUStack, firmware: String) async throws {
        let bootloader = try await stack.discover(DFUStack.bootloader)
        #expect(await stack.disconnected(bootloader), "the bootloader resets into the application")
        let band = try await stack.connect(DFUStack.band)
        #expect(try await stack.firmwareRevision(band) == firmware)
    }

    @Test(arguments: [NotifyMethod.startNotify, .acquire])
    func aSecureUpdateGoesThroughTheBootloaderAtTheNextAddressAndTheBandReturnsWithItsVersion(method: NotifyMethod) async throws {
        try await DFUStack.with { stack in
            let band = try await stack.connect(DFUStack.band)
            #expect(try await stack.firmwareRevision(band) == "2.1.0")
            #expect(stack.bluez.model.device(address: BluetoothAddress(DFUStack.bootloader)!) == nil,
                    "the bootloader is unknown to BlueZ before it advertises")
            let listed = try await stack.control.listDevices()
            #expect(listed.map(\.address) == [DFUStack.band, DFUStack.bootloader])
            #expect(listed.last?.kind == "secure_dfu_bootloader" && listed.last?.state == "silent")

            try await Self.enterSecureBootloader(stack, method: method)
            let bootloaderPath = try await stack.discover(DFUStack.bootloader)
            let seen = try #require(stack.bluez.model.devices[bootloaderPath])
            #expect(seen.name == "DfuTarg" && seen.serviceUUIDs.contains(SecureDFUUUID.service))
            #expect(try await stack.inspectBand()["dfu_mode"] == "bootloader")
            #expect(try await stack.control.listDevices().first?.state == "silent", "the application is off the air")

            var client = Self.secureClient()
            let outcome = try await Self.runBootloader(stack, &client, method: method)
            #expect(outcome == .finished)
            try await Self.expectBandBack(stack, firmware: "2.2.0")
            let shown = try await stack.inspectBand()
            #expect(shown["dfu_mode"] == "application" && shown["dfu_updates"] == "1" && shown["firmware"] == "2.2.0")
            #expect(shown["dfu_bytes_received"] == String(Self.image.count))
        }
    }

    @Test func aLinkDroppedAt40PercentIsResumedFromWhatTheBootloaderKept() async throws {
        try await DFUStack.with(options: "dfu_drop_at: 0.4") { stack in
            try await Self.enterSecureBootloader(stack, method: .acquire)
            var first = Self.secureClient()
            let dropped = try await Self.runBootloader(stack, &first)
            #expect(dropped == .linkLost)
            let atDrop = try #require(Int(try await stack.inspectBand()["dfu_bytes_received"] ?? ""))
            #expect(atDrop >= 8_000 && atDrop < Self.image.count)
            #expect(try await stack.control.listDevices().last?.state == "advertising", "the bootloader stays")

            var second = Self.secureClient()
            let resumed = try await Self.runBootloader(stack, &second)
            #expect(resumed == .finished)
            try await Self.expectBandBack(stack, firmware: "2.2.0")
            let shown = try await stack.inspectBand()
            #expect(shown["dfu_injected_drops"] == "1" && shown["dfu_updates"] == "1")
            // Resumed from Select's offset: less than one 4 KiB object sent twice; starting over would resend 8 KB.
            let received = try #require(Int(shown["dfu_bytes_received"] ?? ""))
            #expect(received >= Self.image.count && received - Self.image.count < 4_096, "received \(received)")
        }
    }

    @Test func anInjectedRejectionIsTheBootloadersAnswerAndTheBandStaysInItsBootloader() async throws {
        try await DFUStack.with(options: "dfu_reject: 0x0B0C") { stack in
            try await Self.enterSecureBootloader(stack, method: .acquire)
            var client = Self.secureClient()
            let outcome = try await Self.runBootloader(stack, &client)
            guard case .failed(let error) = outcome else {
                Issue.record("expected the bootloader's refusal, got \(outcome)")
                return
            }
            #expect(error.code == .dfuFailed && error.vendorCode == 0x0B0C, "\(error)")
            let shown = try await stack.inspectBand()
            #expect(shown["dfu_mode"] == "bootloader" && shown["dfu_injected_rejections"] == "1" && shown["dfu_updates"] == "0")
        }
    }

    @Test func aLegacyUpdateStartsFromTheApplicationsDFUServiceAndInstallsTheImage() async throws {
        try await DFUStack.with(options: "dfu: legacy") { stack in
            let band = try await stack.connect(DFUStack.band)
            #expect(stack.bluez.model.characteristic(device: band, service: SecureDFUUUID.service,
                                                     uuid: SecureDFUUUID.buttonlessWithoutBonds) == nil)
            let version = try stack.characteristic(band, service: LegacyDFUUUID.service, LegacyDFUUUID.version)
            #expect(try await stack.bluez.read(version.path) == [0x01, 0x00], "the application's DFU service")
            try await Self.enterLegacyBootloader(stack)

            let bootloader = try await stack.connect(DFUStack.bootloader)
            let bootloaderVersion = try stack.characteristic(bootloader, service: LegacyDFUUUID.service, LegacyDFUUUID.version)
            #expect(try await stack.bluez.read(bootloaderVersion.path) == [0x08, 0x00])
            var client = LegacyDFUClient(initPacket: Self.legacyInitPacket, firmware: Self.image)
            let outcome = try await Self.runBootloader(stack, &client, .legacy, method: .startNotify)
            #expect(outcome == .finished)
            try await Self.expectBandBack(stack, firmware: "2.3.1")
            #expect(try await stack.inspectBand()["dfu_updates"] == "1")
        }
    }

    @Test func aLegacyValidationRefusedByInjectionResetsTheBandIntoItsOldFirmware() async throws {
        try await DFUStack.with(options: "dfu: legacy, dfu_reject: 5") { stack in
            try await Self.enterLegacyBootloader(stack)

            var client = LegacyDFUClient(initPacket: Self.legacyInitPacket, firmware: Self.image)
            let outcome = try await Self.runBootloader(stack, &client, .legacy)
            #expect(outcome == .failed(LegacyDFUError.remote(.crcError, request: .validate).commandError))
            try await Self.expectBandBack(stack, firmware: "2.1.0")
            let shown = try await stack.inspectBand()
            #expect(shown["dfu_updates"] == "0" && shown["dfu_mode"] == "application")
        }
    }

    @Test func aScenarioBuiltInCodeWithADeviceAtTheBootloaderAddressDoesNotStart() async throws {
        let daemon = try await DBusDaemon()
        let scenario = Scenario(devices: [
            DeviceSettings(kind: .gofitCareXc, address: BluetoothAddress(DFUStack.band)!),
            DeviceSettings(kind: .keyFinder, address: BluetoothAddress(DFUStack.bootloader)!),
        ])
        do {
            let simulator = try await BlueZSimulator.start(scenario, on: .address(daemon.address))
            Issue.record("started with two devices at \(DFUStack.bootloader)")
            await simulator.stop()
        } catch {
            #expect("\(error)".contains("devices[1].address"), "\(error)")
        }
        await daemon.stop()
    }
}
