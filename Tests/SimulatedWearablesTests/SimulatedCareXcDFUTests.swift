import Testing
import Wear2MQTTTesting

@testable import Wearables
@testable import SimulatedWearables
@testable import Firmware

/// The Care-Xc band's Nordic DFU as its application serves it, without a bus: which service each `dfu` option
/// offers, the bootloader it hands its host as the companion, and the buttonless entry.
@Suite("GoFIT Care-Xc: Nordic DFU")
struct SimulatedCareXcDFUTests {
    static let buttonless = BluetoothUUID(string: SecureDFUUUID.buttonlessWithoutBonds)!
    static let legacyVersion = BluetoothUUID(string: LegacyDFUUUID.version)!
    static let firmwareRevision = BluetoothUUID(GATTUUID.Characteristic.firmwareRevision)

    static func band(_ options: [String: SimulationOptionValue] = [:], clock: ManualClock = ManualClock()) throws -> SimulatedCareXc {
        try SimulatedCareXc(clocked(seed: 3, options: options, address: "C0:F1:70:00:00:01", clock: clock))
    }

    static func serviceUUIDs(_ peripheral: any SimulatedPeripheral) -> [String] {
        peripheral.services.map(\.uuid.string)
    }

    @Test("dfu: secure (default) offers 0xFE59 with the buttonless characteristic; its bootloader is DfuTarg at + 1")
    func secure() throws {
        let band = try Self.band()
        #expect(Self.serviceUUIDs(band).contains(SecureDFUUUID.service))
        #expect(!Self.serviceUUIDs(band).contains(LegacyDFUUUID.service))
        #expect(band.services.characteristic(Self.buttonless)?.flags == [.write, .indicate])
        let companion = try #require(band.companion)
        #expect(companion.kind == "secure_dfu_bootloader" && companion.addressOffset == 1)
        let bootloader = companion.peripheral
        #expect(bootloader.advertisement.localName == "DfuTarg")
        #expect(bootloader.advertisement.serviceUUIDs.map(\.string) == [SecureDFUUUID.service])
        #expect(bootloader.services.map(\.uuid.string) == [SecureDFUUUID.service])
        #expect(bootloader.services.characteristic(BluetoothUUID(string: SecureDFUUUID.controlPoint)!)?.flags == [.write, .notify])
        #expect(bootloader.services.characteristic(BluetoothUUID(string: SecureDFUUUID.packet)!)?.flags == .writeWithoutResponse)
    }

    @Test("dfu: legacy offers 0x1530 whose version reads 0x0001 (the application); its bootloader reads 0.8")
    func legacy() async throws {
        let band = try Self.band(["dfu": .string("legacy")])
        #expect(Self.serviceUUIDs(band).contains(LegacyDFUUUID.service))
        #expect(!Self.serviceUUIDs(band).contains(SecureDFUUUID.service))
        #expect(try await band.read(Self.legacyVersion) == [0x01, 0x00])
        let companion = try #require(band.companion)
        #expect(companion.kind == "legacy_dfu_bootloader" && companion.addressOffset == 1)
        #expect(companion.peripheral.advertisement.serviceUUIDs.map(\.string) == [LegacyDFUUUID.service])
        #expect(try await companion.peripheral.read(Self.legacyVersion) == [0x08, 0x00])
    }

    @Test("dfu: none offers neither DFU service and has no companion; inspect still shows the firmware")
    func none() async throws {
        let band = try Self.band(["dfu": .string("none"), "firmware": .string("2.0.7")])
        #expect(!Self.serviceUUIDs(band).contains(SecureDFUUUID.service))
        #expect(!Self.serviceUUIDs(band).contains(LegacyDFUUUID.service))
        #expect(band.companion == nil)
        let shown = await band.inspect()
        #expect(shown["dfu"] == "none" && shown["firmware"] == "2.0.7" && shown["dfu_mode"] == "application")
    }

    @Test("Enter Bootloader: ATT 0xFD without indications; with them indicated 20 01 01, then the radio switches")
    func enterBootloader() async throws {
        let clock = ManualClock()
        let band = try Self.band(clock: clock)
        let companion = try #require(band.companion)
        let link = RecordingPeripheralLink()
        let running = try await run(band, on: link, clock: clock)
        defer { running.cancel() }

        await #expect(throws: ATTError.cccdImproperlyConfigured) {
            try await band.write(Self.buttonless, value: [0x01], kind: .request)
        }
        await band.subscriptionChanged(Self.buttonless, isSubscribed: true)
        try await band.write(Self.buttonless, value: [0x07], kind: .request)
        try await band.write(Self.buttonless, value: [0x01], kind: .request)
        #expect(await link.until { link.values(of: Self.buttonless).count == 2 })
        #expect(link.values(of: Self.buttonless) == [[0x20, 0x07, 0x02], [0x20, 0x01, 0x01]])

        // The reset into the bootloader comes `restartDelay` after the answer.
        #expect(await clock.sleepers(atLeast: 2), "the battery's timer and the restart's")
        #expect(await band.inspect()["dfu_mode"] == "application")
        await clock.advance(by: SimulatedNordicDFU.restartDelay)
        var radio = companion.radio.makeAsyncIterator()
        #expect(await radio.next() == .companion)
        let shown = await band.inspect()
        #expect(shown["dfu_mode"] == "bootloader")
        #expect(shown["firmware"] == "2.1.0" && shown["dfu_updates"] == "0")
        #expect(try await band.read(Self.firmwareRevision) == Array("2.1.0".utf8))
    }
}
