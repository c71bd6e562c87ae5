import BlueZ
import SimulatedWearables
import Testing
import Wear2MQTTTesting
@testable import Wearables

/// The drivers on values the simulators do not send but real devices may, and the vendors' own code reads: the
/// simulated device's notifications on one characteristic are rewritten on their way to the driver.
@Suite("Drivers read what the vendors' decoders read")
struct TolerantDecodingTests {
    static let accelerometer = BluetoothUUID(E4UUID.Short.accelerometer)

    @Test("empatica: 20-byte accelerometer packets publish six samples each, 31.25 ms apart; every tail is counted")
    func empaticaTwentyBytePackets() async throws {
        let band = DriverHarness(EmpaticaE4Driver.self, peripheral: RewritingPeripheral(
            try simulated("empatica_e4"), Self.accelerometer) { $0 + [0xEE, 0xEF] })
        try await band.connect()
        #expect(await band.samplesFlow(.accelerometer, count: 30))
        await band.disconnect()

        let driver = try #require(band.driver as? EmpaticaE4Driver)
        let times = band.recorder.samples(.accelerometer).map(\.timestamp)
        #expect(times.count == 6 * driver.accelerometerPacketsWithTail, "one tail per six-sample packet")
        #expect(Set(zip(times.dropFirst(), times).map { $0 - $1 }).isSubset(of: [31, 32]))
    }

    @Test("empatica: 21-byte packets are seven samples each, timed on without a gap; no tail")
    func empaticaSevenTripletPackets() async throws {
        // The seventh triplet (0, 0, 64) is 1 g on z.
        let band = DriverHarness(EmpaticaE4Driver.self, peripheral: RewritingPeripheral(
            try simulated("empatica_e4"), Self.accelerometer) { $0 + [0x00, 0x00, 0x40] })
        try await band.connect()
        #expect(await band.samplesFlow(.accelerometer, count: 28))
        await band.disconnect()

        let samples = band.recorder.samples(.accelerometer)
        #expect(samples.count % 7 == 0)
        #expect(Set(zip(samples.dropFirst(), samples).map { $0.timestamp - $1.timestamp }).isSubset(of: [31, 32]))
        for (index, sample) in samples.enumerated() where index % 7 == 6 {
            #expect(sample.reading == .vector(x: 0, y: 0, z: 1, accuracy: nil))
        }
        #expect(try #require(band.driver as? EmpaticaE4Driver).accelerometerPacketsWithTail == 0)
    }

    @Test("bose: records before a sensor id SensorInformation does not list are still published")
    func boseRecordsBeforeAnUnknownSensor() async throws {
        let sensorData = try #require(BluetoothUUID(string: BoseUUID.sensorData))
        // Sensor 7 is listed nowhere: the simulated Frames describe sensors 0–6.
        let frames = DriverHarness(BoseWearableDriver.self, peripheral: RewritingPeripheral(
            try simulated("bose_frames"), sensorData) { $0 + [0x07, 0x00, 0x00, 0xAA, 0xBB] })
        try await frames.connect()
        #expect(await frames.until { frames.recorder.state["capabilities"] != nil })
        _ = try await frames.executeWhenReady(.configure(["sensors": .object(["accelerometer": .object(["period_ms": 20])])]))
        #expect(await frames.samplesFlow(.accelerometer))
        await frames.disconnect()
    }

    @Test("bose: a device confirming a gesture with state byte 0x03 confirms it (bit 0 is enabled)")
    func boseGestureStateBitZero() async throws {
        let gestureConfiguration = try #require(BluetoothUUID(string: BoseUUID.gestureConfiguration))
        let frames = DriverHarness(BoseWearableDriver.self, peripheral: RewritingPeripheral(
            try simulated("bose_frames"), gestureConfiguration) { bytes in
                // Entries are [id][state]: every "on" comes back with bit 1 set as well.
                bytes.enumerated().map { $0.offset % 2 == 1 && $0.element == 0x01 ? 0x03 : $0.element }
            })
        try await frames.connect()
        #expect(await frames.until { frames.recorder.state["capabilities"] != nil })
        let applied = try await frames.executeWhenReady(.configure(["gestures": .object(["double_tap": .flag(true)])]))
        #expect(applied.object?["gestures"]?.object?["double_tap"] == .flag(true))
        #expect(frames.recorder.state["gestures"]?.object?["double_tap"] == .flag(true))
        await frames.disconnect()
    }
}

/// A simulated device whose notifications on `characteristic` pass through `rewrite` before the central sees them;
/// everything else is the wrapped device's.
final class RewritingPeripheral: SimulatedPeripheral {
    let inner: any SimulatedPeripheral
    let characteristic: BluetoothUUID
    let rewrite: @Sendable ([UInt8]) -> [UInt8]

    init(_ inner: any SimulatedPeripheral, _ characteristic: BluetoothUUID, rewrite: @escaping @Sendable ([UInt8]) -> [UInt8]) {
        self.inner = inner
        self.characteristic = characteristic
        self.rewrite = rewrite
    }

    var advertisement: SimulatedAdvertisement { inner.advertisement }
    var services: [SimulatedService] { inner.services }
    var deviceName: String { inner.deviceName }

    func run(on link: any PeripheralLink) async {
        await inner.run(on: RewritingLink(link: link, characteristic: characteristic, rewrite: rewrite))
    }

    func read(_ characteristic: BluetoothUUID) async throws(ATTError) -> [UInt8] { try await inner.read(characteristic) }

    func write(_ characteristic: BluetoothUUID, value: [UInt8], kind: WriteKind) async throws(ATTError) {
        try await inner.write(characteristic, value: value, kind: kind)
    }

    func subscriptionChanged(_ characteristic: BluetoothUUID, isSubscribed: Bool) async {
        await inner.subscriptionChanged(characteristic, isSubscribed: isSubscribed)
    }

    func handle(_ event: DeviceEvent, link: (any PeripheralLink)?) async -> Bool { await inner.handle(event, link: link) }

    private struct RewritingLink: PeripheralLink {
        let link: any PeripheralLink
        let characteristic: BluetoothUUID
        let rewrite: @Sendable ([UInt8]) -> [UInt8]

        var mtu: Int { link.mtu }

        func isSubscribed(_ characteristic: BluetoothUUID) async -> Bool { await link.isSubscribed(characteristic) }

        func notify(_ characteristic: BluetoothUUID, value: [UInt8]) async -> Bool {
            await link.notify(characteristic, value: characteristic == self.characteristic ? rewrite(value) : value)
        }

        func indicate(_ characteristic: BluetoothUUID, value: [UInt8]) async -> Bool {
            await link.indicate(characteristic, value: value)
        }

        func disconnect() async { await link.disconnect() }
    }
}
