import BlueZ
import Foundation
import Simulator
import Testing

struct ScenarioLoaderTests {
    @Test func theDocumentedExampleLoads() throws {
        let scenario = try ScenarioLoader.load(yaml: """
        seed: 7
        adapter:
          address: 00:1A:7D:DA:71:13
          name: gateway-hci0
          gatt_cache: "no"
          disconnect_timer: 2s
          temporary_timeout: 30s
          max_connections: 5
        devices:
          - kind: heart_rate_strap
            address: C0:FF:EE:00:00:01
            name: HRM-Pro
            rssi: -58
            tx_power: 4
            manufacturer_data: { 0x0059: "01 02 03" }
            pairing: { method: request_passkey, passkey: 123456 }
            options: { rate_hz: 4, bpm: 75, battery: 60 }
          - kind: key_finder
            address: 11:22:33:44:55:66
            advertising: false
        faults:
          - { at: 10s, action: drop_link, device: C0:FF:EE:00:00:01 }
          - { at: 500ms, action: refuse_connects, device: C0:FF:EE:00:00:01, count: 2, error: org.bluez.Error.Failed }
          - { at: 1.5, action: fail_next_call, method: StartDiscovery }
          - { at: 12s, action: power_off }
        """)
        #expect(scenario.seed == 7)
        #expect(scenario.adapter.gattCache == .no)
        #expect(scenario.adapter.maxConnections == 5)
        #expect(scenario.devices.map(\.address.description) == ["C0:FF:EE:00:00:01", "11:22:33:44:55:66"])
        #expect(scenario.devices[0].manufacturerData == [0x0059: [1, 2, 3]])
        #expect(scenario.devices[0].pairing == .requestPasskey)
        #expect(!scenario.devices[1].advertising)
        #expect(scenario.timeline.map(\.at) == [.milliseconds(500), .milliseconds(1500), .seconds(10), .seconds(12)])
        #expect(scenario.timeline[1].action == .failNextCall(nil, method: "StartDiscovery", error: .busy))
    }

    /// Each malformed document and the key its error must name.
    static let malformed: [(yaml: String, key: String)] = [
        ("devices:\n  - kind: toaster\n    address: C0:FF:EE:00:00:01\n", "devices[0].kind"),
        ("devices:\n  - kind: thermometer\n", "devices[0].address"),
        ("devices:\n  - kind: thermometer\n    address: C0:FF:EE\n", "devices[0].address"),
        ("devices:\n  - kind: thermometer\n    address: C0-FF-EE-00-00-01\n", "devices[0].address"),
        ("devices:\n  - kind: heart_rate_strap\n    address: C0:FF:EE:00:00:01\n    options: { rate_hz: fast }\n",
         "devices[0].options.rate_hz"),
        ("devices:\n  - kind: heart_rate_strap\n    address: C0:FF:EE:00:00:01\n    options: { bmp: 70 }\n",
         "devices[0].options.bmp"),
        ("devices:\n  - kind: heart_rate_strap\n    address: C0:FF:EE:00:00:01\n    rsi: -50\n", "devices[0].rsi"),
        ("adapter:\n  gatt_cache: sometimes\n", "adapter.gatt_cache"),
        ("adapter:\n  disconnect_timer: soon\n", "adapter.disconnect_timer"),
        ("faults:\n  - { at: 1s, action: explode }\n", "faults[0].action"),
        ("faults:\n  - { at: 1s, action: drop_link, device: C0:FF:EE:00:00:09 }\n", "faults[0].device"),
        ("faults:\n  - { at: 1s, action: drop_link }\n", "faults[0].device"),
        ("faults:\n  - { at: 1s, action: fail_next_call, method: Connect, error: \"not an error\" }\n", "faults[0].error"),
        ("faults:\n  - { at: 1s, action: deafen_scanner }\n", "faults[0].cleared_by"),
        ("faults:\n  - { at: 1s, action: deafen_scanner, cleared_by: reboot }\n", "faults[0].cleared_by"),
        ("devices: [\n", ""),
    ]

    @Test func theRadioFaultsAreTimelineActions() throws {
        let scenario = try ScenarioLoader.load(yaml: """
        faults:
          - { at: 1s, action: deafen_scanner, cleared_by: power }
          - { at: 2s, action: deafen_scanner, cleared_by: restart }
          - { at: 3s, action: stick_discovery }
          - { at: 4s, action: remove_adapter }
          - { at: 5s, action: restore_adapter }
        """)
        #expect(scenario.timeline.map(\.action) == [.deafenScanner(clearedBy: .power), .deafenScanner(clearedBy: .restart),
                                                     .stickDiscovery, .removeAdapter, .restoreAdapter])
    }

    @Test func aDeviceWhereABandsBootloaderWouldAdvertiseIsRefusedNamingItsLine() {
        let yaml = """
        devices:
          - kind: gofit_care_xc
            address: C0:F1:70:00:00:FF
          - kind: key_finder
            address: C0:F1:70:00:00:00
        """
        #expect(throws: ScenarioError(
            key: "devices[1].address",
            reason: "C0:F1:70:00:00:00 is where devices[0]'s secure_dfu_bootloader advertises; devices[1] cannot use it too",
            line: 4)) { try ScenarioLoader.load(yaml: yaml) }
        // Without a bootloader (dfu: none) the address is free.
        #expect(throws: Never.self) {
            try ScenarioLoader.load(yaml: yaml.replacingOccurrences(of: "00:00:FF", with: "00:00:FF\n    options: { dfu: none }"))
        }
    }

    @Test func aFaultMayNameABandsBootloaderButNoOtherUnknownAddress() throws {
        let yaml = "devices:\n  - kind: gofit_care_xc\n    address: C0:F1:70:00:00:01\n"
        let scenario = try ScenarioLoader.load(yaml: yaml + "faults:\n  - { at: 1s, action: drop_link, device: C0:F1:70:00:00:02 }\n")
        #expect(scenario.timeline.first?.action == .dropLink(BluetoothAddress("C0:F1:70:00:00:02")!))
        #expect(throws: ScenarioError.self) {
            try ScenarioLoader.load(yaml: yaml + "faults:\n  - { at: 1s, action: drop_link, device: C0:F1:70:00:00:03 }\n")
        }
    }

    @Test(arguments: 0..<malformed.count)
    func aMalformedScenarioFailsNamingTheKey(_ index: Int) {
        let (yaml, key) = Self.malformed[index]
        do {
            _ = try ScenarioLoader.load(yaml: yaml)
            Issue.record("accepted: \(yaml)")
        } catch {
            #expect(error.key == key, "\(error)")
            #expect(error.description.hasPrefix(key.isEmpty ? "scenario" : key))
        }
    }
}
