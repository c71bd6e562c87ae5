import DBus
import Wearables
import SimulatedWearables

/// Calls the simulator's control interface from another process (the CLI's `control` verbs, tests).
public struct SimulatorControlClient: Sendable {
    public let bus: BusConnection

    public init(bus: BusConnection) { self.bus = bus }

    @discardableResult
    private func call(_ member: String, _ arguments: [DBusValue] = []) async throws(BusError) -> [DBusValue] {
        try await bus.call(destination: SimulatorControl.busName, path: SimulatorControl.path, interface: SimulatorControl.interface,
                           member: member, arguments: arguments, timeout: .seconds(10))
    }

    public func dropLink(_ address: String) async throws(BusError) { try await call("DropLink", [.string(address)]) }

    /// `error` empty: org.bluez.Error.Failed "le-connection-abort-by-local".
    public func refuseConnects(_ address: String, count: Int, error: String = "") async throws(BusError) {
        try await call("RefuseConnects", [.string(address), .uint32(UInt32(count)), .string(error)])
    }

    public func setAdvertising(_ address: String, _ on: Bool) async throws(BusError) {
        try await call("SetAdvertising", [.string(address), .boolean(on)])
    }

    /// `address` empty: the adapter.
    public func setLatency(_ address: String, milliseconds: Int) async throws(BusError) {
        try await call("SetLatency", [.string(address), .uint32(UInt32(milliseconds))])
    }

    /// `address` empty: the adapter; `error` empty: org.bluez.Error.InProgress "Operation already in progress".
    public func failNextCall(_ address: String, method: String, error: String = "") async throws(BusError) {
        try await call("FailNextCall", [.string(address), .string(method), .string(error)])
    }

    public func setPowered(_ on: Bool) async throws(BusError) { try await call("SetPowered", [.boolean(on)]) }

    public func raiseEvent(_ address: String, _ event: DeviceEvent) async throws(BusError) {
        try await call("RaiseEvent", [.string(address), .string(event.rawValue)])
    }

    public func setRSSI(_ address: String, _ rssi: Int) async throws(BusError) {
        try await call("SetRSSI", [.string(address), .int16(Int16(clamping: rssi))])
    }

    /// Each advertisement heard at the level ± uniform noise of `amplitude` dB, drawn from a stream seeded with
    /// `seed`; 0 dB: back to the built-in ±2 dB fading.
    public func setRSSINoise(_ address: String, amplitude: Int, seed: UInt64) async throws(BusError) {
        try await call("SetRSSINoise", [.string(address), .uint16(UInt16(clamping: amplitude)), .uint64(seed)])
    }

    /// No advertisement reaches BlueZ any more while Discovering stays true, until `clearedBy`: `.restart` (the
    /// scanner stops completely: the last StopDiscovery, or power-off) or `.power` (only a power cycle).
    public func deafenScanner(clearedBy cure: DeafScannerCure) async throws(BusError) {
        try await call("DeafenScanner", [.string(cure.rawValue)])
    }

    /// A discovery under way ends; StartDiscovery answers org.bluez.Error.InProgress and Discovering stays false
    /// until the adapter is power-cycled.
    public func stickDiscovery() async throws(BusError) { try await call("StickDiscovery") }

    /// The controller's index goes away: links drop, device objects and the adapter object are removed.
    /// org.wear2mqtt.Simulator.Error.AdapterRemoved when it already is.
    public func removeAdapter() async throws(BusError) { try await call("RemoveAdapter") }

    /// The adapter object comes back (powered on) with the paired devices. org.wear2mqtt.Simulator.Error.AdapterPresent
    /// when it was not removed.
    public func restoreAdapter() async throws(BusError) { try await call("RestoreAdapter") }

    public func received(_ address: String, characteristic: String) async throws(BusError) -> [[UInt8]] {
        let reply = try await call("GetReceived", [.string(address), .string(characteristic)])
        return reply.first?.arrayValues?.compactMap(\.bytesValue) ?? []
    }

    /// What the device shows or counted that a central cannot read (`SimulatedPeripheral.inspect()`): for a
    /// `gofit_care_xc` its `pairing_code`, `paired`, `vibrations`, `history_records`, …; empty for most kinds.
    /// `address` empty: the adapter, with `adapter` (`present`/`removed`), `scanner_deaf` (`no`, `restart`, `power`),
    /// `discovery_stuck` (`yes`/`no`), and the counts `power_offs`, `power_ons`, `discovery_starts` and
    /// `unheard_advertisements`.
    public func inspect(_ address: String) async throws(BusError) -> [String: String] {
        let reply = try await call("Inspect", [.string(address)])
        var values: [String: String] = [:]
        for entry in reply.first?.dictionaryEntries ?? [] {
            if let key = entry.key.stringValue, let value = entry.value.stringValue { values[key] = value }
        }
        return values
    }

    public func listDevices() async throws(BusError) -> [(address: String, kind: String, state: String)] {
        let reply = try await call("ListDevices")
        return (reply.first?.arrayValues ?? []).compactMap { entry in
            guard let items = entry.structureValues, items.count == 3 else { return nil }
            return (items[0].stringValue ?? "", items[1].stringValue ?? "", items[2].stringValue ?? "")
        }
    }
}
