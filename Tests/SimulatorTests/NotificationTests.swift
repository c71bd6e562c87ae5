#if canImport(Glibc)
import Glibc
#endif
import DBus
import Simulator
import Testing
import Wear2MQTTTesting
import Wearables

/// Heart-rate notifications by StartNotify (PropertiesChanged on Value) and by AcquireNotify (datagrams).
@Suite(.timeLimit(.minutes(2)))
struct NotificationTests {
    static let strapPath = SimulatorHarness.devicePath(SimulatorHarness.strap)
    static let measurement = strapPath.appending("service000c/char000d")
    static let characteristic = "org.bluez.GattCharacteristic1"

    @Test func startNotifyDeliversMeasurementsAsValueChangesThatDecode() async throws {
        try await SimulatorHarness.with { harness in
            try await harness.connect(SimulatorHarness.strap)
            let mark = harness.signals.mark
            try await harness.call(Self.measurement, Self.characteristic, "StartNotify")
            _ = try await harness.signals.next(after: mark) { $0.changes(Self.measurement, Self.characteristic)?["Notifying"] == true }
            var values: [[UInt8]] = []
            var index = mark
            while values.count < 5 {
                guard let found = await harness.signals.first(from: index, within: .seconds(3), {
                    $0.changes(Self.measurement, Self.characteristic)?["Value"] != nil
                }) else { break }
                values.append(found.signal.changes(Self.measurement, Self.characteristic)?["Value"]?.bytesValue ?? [])
                index = found.index + 1
            }
            #expect(values.count == 5)
            let decoded = try values.map { try HeartRateMeasurement.decode($0) }
            #expect(decoded.allSatisfy { (40...110).contains($0.bpm) && $0.contact == true })
            // StartNotify again from the same client: success; AcquireNotify meanwhile: InProgress.
            try await harness.call(Self.measurement, Self.characteristic, "StartNotify")
            await #expect(throws: BusError.remote(name: "org.bluez.Error.InProgress", message: "In Progress")) {
                try await harness.call(Self.measurement, Self.characteristic, "AcquireNotify", [.stringVariantDictionary([:])])
            }
            let cccd = try await harness.call(Self.measurement.appending("desc000f"), "org.bluez.GattDescriptor1", "ReadValue",
                                              [.stringVariantDictionary([:])])
            #expect(cccd.first?.bytesValue == [1, 0])
            try await harness.call(Self.measurement, Self.characteristic, "StopNotify")
            #expect(try await harness.property(Self.measurement, Self.characteristic, "Notifying") == false)
            await #expect(throws: BusError.remote(name: "org.bluez.Error.Failed", message: "No notify session started")) {
                try await harness.call(Self.measurement, Self.characteristic, "StopNotify")
            }
        }
    }

    @Test func acquireNotifyDeliversDatagramsOnTheDescriptorAndClosingItReleases() async throws {
        try await SimulatorHarness.with { harness in
            try await harness.connect(SimulatorHarness.strap)
            #expect(harness.client.canPassFileDescriptors)
            let reply = try await harness.call(Self.measurement, Self.characteristic, "AcquireNotify", [.stringVariantDictionary([:])])
            let fd = try #require(reply.first?.unixFDValue)
            #expect(reply.last == .uint16(247))
            #expect(try await harness.property(Self.measurement, Self.characteristic, "NotifyAcquired") == true)
            #expect(try await harness.property(Self.measurement, Self.characteristic, "Notifying") == false,
                    "BlueZ does not set Notifying for AcquireNotify")
            var measurements: [HeartRateMeasurement] = []
            for _ in 0..<5 {
                let datagram = try #require(try await readDatagram(fd, within: .seconds(2)))
                measurements.append(try HeartRateMeasurement.decode(datagram))
            }
            #expect(measurements.allSatisfy { (40...110).contains($0.bpm) })
            await #expect(throws: BusError.remote(name: "org.bluez.Error.NotPermitted", message: "Notify acquired")) {
                try await harness.call(Self.measurement, Self.characteristic, "StartNotify")
            }
            await #expect(throws: BusError.remote(name: "org.bluez.Error.NotPermitted", message: "Notify acquired")) {
                try await harness.call(Self.measurement, Self.characteristic, "AcquireNotify", [.stringVariantDictionary([:])])
            }
            // Hanging up the client's end (what closing it does) releases the acquisition.
            let mark = harness.signals.mark
            _ = shutdown(fd.rawValue, Int32(SHUT_RDWR))
            _ = try await harness.signals.next(after: mark) { $0.changes(Self.measurement, Self.characteristic)?["NotifyAcquired"] == false }
            try await harness.call(Self.measurement, Self.characteristic, "StartNotify")
        }
    }

    @Test func sessionsKeptOverACachedDisconnectionResumeWithoutAskingAgain() async throws {
        try await SimulatorHarness.with { harness in
            try await harness.connect(SimulatorHarness.strap)
            try await harness.call(Self.measurement, Self.characteristic, "StartNotify")
            try await harness.control.dropLink(SimulatorHarness.strap)
            _ = try await harness.signals.next { $0.changes(Self.strapPath, "org.bluez.Device1")?["Connected"] == false }
            #expect(try await harness.property(Self.measurement, Self.characteristic, "Notifying") == true,
                    "BlueZ leaves Notifying true while the device is away")
            await #expect(throws: BusError.remote(name: "org.bluez.Error.InProgress", message: "In Progress")) {
                try await harness.call(Self.measurement, Self.characteristic, "StartNotify")
            }
            let mark = harness.signals.mark
            try await harness.call(Self.strapPath, "org.bluez.Device1", "Connect")
            _ = try await harness.signals.next(after: mark) { $0.changes(Self.measurement, Self.characteristic)?["Value"] != nil }
        }
    }
    @Test func thermometerIndicationsArriveThroughStartNotifyAndCannotBeAcquired() async throws {
        try await SimulatorHarness.with { harness in
            let thermometerPath = SimulatorHarness.devicePath(SimulatorHarness.thermometer)
            try await harness.connect(SimulatorHarness.thermometer)
            let measurement = try await GATTTests.characteristic(0x2A1C, of: thermometerPath, in: harness)
            #expect(try await harness.property(measurement, Self.characteristic, "Flags")?.stringArrayValue == ["indicate"])
            #expect(measurement == thermometerPath.appending("service000c/char000d"))
            let all = try await harness.call(measurement, "org.freedesktop.DBus.Properties", "GetAll", [.string(Self.characteristic)])
            #expect(all.first?.stringKeyedDictionary?["NotifyAcquired"] == nil, "only characteristics that notify have it")
            // BlueZ 5.66 acquires notifications only, not indications.
            await #expect(throws: BusError.remote(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")) {
                try await harness.call(measurement, Self.characteristic, "AcquireNotify", [.stringVariantDictionary([:])])
            }
            let mark = harness.signals.mark
            try await harness.call(measurement, Self.characteristic, "StartNotify")
            let indicated = try await harness.signals.next(after: mark) { $0.changes(measurement, Self.characteristic)?["Value"] != nil }
            let value = try TemperatureMeasurement.decode(indicated.changes(measurement, Self.characteristic)?["Value"]?.bytesValue ?? [])
            #expect(abs((value.celsius ?? 0) - 36.8) < 1.6)
            let cccd = try await harness.call(measurement.appending("desc000f"),
                                              "org.bluez.GattDescriptor1", "ReadValue", [.stringVariantDictionary([:])])
            #expect(cccd.first?.bytesValue == [2, 0], "indications enabled")
        }
    }
}

