#if canImport(Glibc)
import Glibc
#endif
import DBus
import Simulator
import Testing
import Wear2MQTTTesting
import Wearables
import SimulatedWearables

/// ReadValue and WriteValue on the simulated devices' characteristics and descriptors.
@Suite(.timeLimit(.minutes(2)))
struct GATTTests {
    static let strapPath = SimulatorHarness.devicePath(SimulatorHarness.strap)
    static let tagPath = SimulatorHarness.devicePath(SimulatorHarness.tag)
    static let noOptions = DBusValue.stringVariantDictionary([:])

    /// The object path of the characteristic with `uuid` under `device`.
    static func characteristic(_ uuid: UInt16, of device: ObjectPath, in harness: SimulatorHarness) async throws -> ObjectPath {
        let wanted = BluetoothUUID(uuid).string
        let tree = try await harness.managedObjects()
        return try #require(tree.first { path, interfaces in
            path.isDescendant(of: device) && interfaces["org.bluez.GattCharacteristic1"]?["UUID"]?.stringValue == wanted
        }?.key)
    }

    @Test func readingTheBatteryAndDeviceInformationGivesTheConfiguredValues() async throws {
        try await SimulatorHarness.with { harness in
            try await harness.connect(SimulatorHarness.strap)
            let battery = try await Self.characteristic(0x2A19, of: Self.strapPath, in: harness)
            #expect(battery == Self.strapPath.appending("service0014/char0015"))
            let mark = harness.signals.mark
            let level = try await harness.call(battery, "org.bluez.GattCharacteristic1", "ReadValue", [Self.noOptions])
            #expect(try BatteryLevel.decode(level.first?.bytesValue ?? []).percent == 77)
            // The read updates the cached Value, and signals it.
            _ = try await harness.signals.next(after: mark) { $0.changes(battery, "org.bluez.GattCharacteristic1")?["Value"] == .bytes([77]) }
            #expect(try await harness.property(battery, "org.bluez.GattCharacteristic1", "Value") == .bytes([77]))
            let manufacturer = try await Self.characteristic(0x2A29, of: Self.strapPath, in: harness)
            let name = try await harness.call(manufacturer, "org.bluez.GattCharacteristic1", "ReadValue", [Self.noOptions])
            #expect(try DeviceInformationString.decode(name.first?.bytesValue ?? []) == "Polar Electro Oy")
            let model = try await Self.characteristic(0x2A24, of: Self.strapPath, in: harness)
            let whole = try await harness.call(model, "org.bluez.GattCharacteristic1", "ReadValue", [Self.noOptions])
            #expect(whole.first?.bytesValue == Array("H10".utf8))
            let offset = try await harness.call(model, "org.bluez.GattCharacteristic1", "ReadValue",
                                                [.stringVariantDictionary(["offset": .uint16(1)])])
            #expect(offset.first?.bytesValue == Array("H10".utf8), "the cache is the value read at the offset over the old one")
            await #expect(throws: BusError.remote(name: "org.bluez.Error.InvalidArguments", message: "Invalid offset")) {
                try await harness.call(model, "org.bluez.GattCharacteristic1", "ReadValue",
                                       [.stringVariantDictionary(["offset": .uint16(40)])])
            }
            let measurement = Self.strapPath.appending("service000c/char000d")
            await #expect(throws: BusError.remote(name: "org.bluez.Error.NotPermitted", message: "Read not permitted")) {
                try await harness.call(measurement, "org.bluez.GattCharacteristic1", "ReadValue", [Self.noOptions])
            }
            let cccd = try await harness.call(measurement.appending("desc000f"), "org.bluez.GattDescriptor1", "ReadValue", [Self.noOptions])
            #expect(cccd.first?.bytesValue == [0, 0])
            await #expect(throws: BusError.remote(name: "org.bluez.Error.NotPermitted", message: "Write not permitted")) {
                try await harness.call(measurement.appending("desc000f"), "org.bluez.GattDescriptor1", "WriteValue",
                                       [.bytes([1, 0]), Self.noOptions])
            }
        }
    }

    @Test func alertLevelsWrittenToTheTagAreRecordedAndReadBackThroughTheControlInterface() async throws {
        try await SimulatorHarness.with { harness in
            try await harness.connect(SimulatorHarness.tag)
            let alert = try await Self.characteristic(0x2A06, of: Self.tagPath, in: harness)
            #expect(try await harness.property(alert, "org.bluez.GattCharacteristic1", "Flags")?.stringArrayValue == ["write-without-response"])
            #expect(try await harness.property(alert, "org.bluez.GattCharacteristic1", "WriteAcquired") == false)
            try await harness.call(alert, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes(AlertLevel.high.encode()), Self.noOptions])
            try await harness.call(alert, "org.bluez.GattCharacteristic1", "WriteValue",
                                   [.bytes(AlertLevel.mild.encode()), .stringVariantDictionary(["type": "command"])])
            // A write request to a write-without-response characteristic is refused by the device's ATT server; it
            // queues behind the two commands, so by its answer they have reached the tag.
            await #expect(throws: BusError.remote(name: "org.bluez.Error.NotPermitted", message: "Write not permitted")) {
                try await harness.call(alert, "org.bluez.GattCharacteristic1", "WriteValue",
                                       [.bytes([0]), .stringVariantDictionary(["type": "request"])])
            }
            #expect(try await harness.control.received(SimulatorHarness.tag, characteristic: "00002a06-0000-1000-8000-00805f9b34fb")
                == [[2], [1]])
            // AcquireWrite: each datagram is one write command.
            let reply = try await harness.call(alert, "org.bluez.GattCharacteristic1", "AcquireWrite", [Self.noOptions])
            let fd = try #require(reply.first?.unixFDValue)
            #expect(reply.last == .uint16(247))
            #expect(try await harness.property(alert, "org.bluez.GattCharacteristic1", "WriteAcquired") == true)
            await #expect(throws: BusError.remote(name: "org.bluez.Error.NotPermitted", message: "Write acquired")) {
                try await harness.call(alert, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes([0]), Self.noOptions])
            }
            var none: UInt8 = 0
            #expect(send(fd.rawValue, &none, 1, 0) == 1)
            // Hanging up releases the acquisition, after the writes sent before it have reached the tag.
            let mark = harness.signals.mark
            #expect(shutdown(fd.rawValue, Int32(SHUT_WR)) == 0)
            _ = try await harness.signals.next(after: mark) { $0.changes(alert, "org.bluez.GattCharacteristic1")?["WriteAcquired"] == false }
            #expect(try await harness.control.received(SimulatorHarness.tag, characteristic: "2a06") == [[2], [1], [0]])
        }
    }

    @Test func theHeartRateControlPointAnswersAnUnknownCommandWithTheServicesATTError() async throws {
        try await SimulatorHarness.with { harness in
            try await harness.connect(SimulatorHarness.strap)
            let controlPoint = try await Self.characteristic(0x2A39, of: Self.strapPath, in: harness)
            try await harness.call(controlPoint, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes([0x01]), Self.noOptions])
            await #expect(throws: BusError.remote(name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x80")) {
                try await harness.call(controlPoint, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes([0x09]), Self.noOptions])
            }
            await #expect(throws: BusError.remote(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")) {
                try await harness.call(controlPoint, "org.bluez.GattCharacteristic1", "WriteValue",
                                       [.bytes([0x01]), .stringVariantDictionary(["type": "bogus"])])
            }
            // BlueZ sends a forced write command anyway; the device's ATT server drops it (write-only attribute). The
            // write request after it queues behind it: by its answer the command was handed over, or dropped.
            try await harness.call(controlPoint, "org.bluez.GattCharacteristic1", "WriteValue",
                                   [.bytes([0x01]), .stringVariantDictionary(["type": "command"])])
            try await harness.call(controlPoint, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes([0x01]), Self.noOptions])
            #expect(try await harness.control.received(SimulatorHarness.strap, characteristic: "2a39") == [[0x01], [0x09], [0x01]])
        }
    }
}
