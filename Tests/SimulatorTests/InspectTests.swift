import BlueZ
import DBus
import Simulator
import Testing
import Wear2MQTTTesting
import Wearables

/// `Inspect` on the control interface: what a device shows that a central cannot read, here the GoFIT band's
/// pairing code after a `PAIR_START` written through the simulated BlueZ.
@Suite(.timeLimit(.minutes(2)))
struct InspectTests {
    static let band = "C0:F1:70:00:00:01"
    static let bandPath = SimulatorHarness.devicePath(band)
    static let noOptions = DBusValue.stringVariantDictionary([:])

    static let scenario = """
        seed: 42
        adapter:
          address: "00:1A:7D:DA:71:13"
          disconnect_timer: 100ms
        devices:
          - kind: gofit_care_xc
            address: \(band)
            advertising_interval: 100ms
            options: { history_days: 1, history_end: 1795320000 }
          - kind: key_finder
            address: \(SimulatorHarness.tag)
            advertising_interval: 100ms
        """

    /// The object path of the characteristic with the 128-bit `uuid` under the band.
    static func characteristic(_ uuid: String, in harness: SimulatorHarness) async throws -> ObjectPath {
        let tree = try await harness.managedObjects()
        return try #require(tree.first { path, interfaces in
            path.isDescendant(of: bandPath) && interfaces["org.bluez.GattCharacteristic1"]?["UUID"]?.stringValue == uuid
        }?.key)
    }

    @Test func aPairStartWrittenOverGATTShowsACodeThatInspectReads() async throws {
        try await SimulatorHarness.with(Self.scenario) { harness in
            let idle = try await harness.control.inspect(Self.band)
            #expect(idle["pairing_code"] == "" && idle["paired"] == "false" && idle["serial"] == "CXC0000001")
            #expect(idle["history_records"].flatMap { Int($0) } ?? 0 > 200)
            #expect(try await harness.simulator.inspect(BluetoothAddress(Self.band)!) == idle)

            try await harness.connect(Self.band)
            let request = try await Self.characteristic(GoFITUUID.request, in: harness)
            let response = try await Self.characteristic(GoFITUUID.response, in: harness)
            try await harness.call(response, "org.bluez.GattCharacteristic1", "StartNotify")
            let mark = harness.signals.mark
            // PAIR_START, sequence 5, in one segment (docs/protocols/gofit.md, "Example frames").
            try await harness.call(request, "org.bluez.GattCharacteristic1", "WriteValue",
                                   [.bytes([0x80, 0x01, 0x05, 0x00, 0x00, 0x84, 0x19]), Self.noOptions])
            let answer = try await harness.signals.next(after: mark) {
                $0.changes(response, "org.bluez.GattCharacteristic1")?["Value"] != nil
            }
            let segment = try #require(answer.changes(response, "org.bluez.GattCharacteristic1")?["Value"]?.bytesValue)
            #expect(Array(segment.prefix(6)) == [0x80, 0x81, 0x05, 0x05, 0x00, 0x0A])

            let shown = try await harness.control.inspect(Self.band)
            let code = try #require(shown["pairing_code"])
            #expect(code.count == 4 && code.allSatisfy(\.isNumber))
            #expect(shown["requests"] == "1")

            #expect(try await harness.control.inspect(SimulatorHarness.tag) == [:], "a tag shows nothing")
            await #expect(throws: BusError.self) { try await harness.control.inspect("C0:FF:EE:00:00:09") }
        }
    }
}
