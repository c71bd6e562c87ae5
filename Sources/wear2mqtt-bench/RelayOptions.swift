import ArgumentParser
import BlueZ

/// What both relays (`relay`, `floor-relay`) are told: the bus, the broker, the notify method, the devices and the
/// coalescing window.
struct RelayOptions: ParsableArguments {
    @Option(help: "D-Bus address of BlueZ (or the simulator).")
    var bus: String

    @Option(help: "Port of the MQTT broker on 127.0.0.1.")
    var port: Int

    @Option(help: "acquire (AcquireNotify) or start_notify (PropertiesChanged signals).")
    var method: String = "acquire"

    @Option(help: "Comma-separated device addresses.")
    var devices: String

    @Option(help: "The coalescing window in milliseconds (the gateway's mqtt.coalesce_ms): after a wake-up that came within two windows of the last, wait out the window so what arrives meanwhile is handled together.")
    var coalesceMs: Int = 0

    func validate() throws {
        guard ["acquire", "start_notify"].contains(method) else {
            throw ValidationError("--method must be acquire or start_notify, got \(method)")
        }
        guard !addresses.isEmpty else { throw ValidationError("--devices names no address") }
    }

    var addresses: [BluetoothAddress] {
        devices.split(separator: ",").compactMap { BluetoothAddress(String($0)) }
    }
}
