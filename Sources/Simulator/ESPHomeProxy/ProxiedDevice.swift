import Foundation
import BlueZ
import ESPHome
import SimulatedWearables

/// One of the scenario's devices in the simulated proxy's range: the peripheral built as `wear2mqtt-sim run` builds it
/// (`DeviceSettings.configuration(scenarioSeed:)` and the kind's factory), its attribute table, and its radio side
/// (what it advertises, how strongly, when next). Mutated on the proxy's loop only.
///
/// Not modeled here (yet): the scenario's timeline and faults, and companions (a band's DFU bootloader at another
/// address): the proxy serves the devices as the scenario starts them.
struct ProxiedDevice {
    let settings: DeviceSettings
    let peripheral: any SimulatedPeripheral
    let table: ProxyGATTTable
    let address: UInt64
    /// The AD structures, built once: the simulated advertisements do not change while the proxy runs.
    let advertisingData: [UInt8]
    let level: Int
    var random: SimulationRandom
    var nextSighting: ContinuousClock.Instant?

    init(settings: DeviceSettings, index: Int, scenarioSeed: UInt64) throws(ScenarioError) {
        let configuration = settings.configuration(scenarioSeed: scenarioSeed)
        do {
            peripheral = try settings.kind.make(configuration)
        } catch {
            throw ScenarioError(key: "devices[\(index)].options.\(error.key)", reason: error.description)
        }
        self.settings = settings
        table = ProxyGATTTable(GATTLayout(deviceServices: peripheral.services, deviceName: peripheral.deviceName,
                                          appearance: peripheral.advertisement.appearance))
        address = ProxyAddress.uint64(settings.address)
        let advertisement = settings.overriding(peripheral.advertisement)
        advertisingData = AdvertisingData.bytes(advertisement)
        level = advertisement.rssi
        random = SimulationRandom(seed: configuration.seed ^ 0xE5B0)
    }

    /// One advertisement as the proxy's scanner hears it: the device's level with the ±2 dB of fading the BlueZ
    /// simulator gives every packet, from the device's own seeded stream.
    mutating func sighting() -> BluetoothLERawAdvertisement {
        var raw = BluetoothLERawAdvertisement()
        raw.address = address
        raw.addressType = Self.addressType(settings.addressType)
        raw.rssi = Int32(max(-127, min(20, level + Int.random(in: -2...2, using: &random))))
        raw.data = .init(advertisingData)
        return raw
    }

    /// A scenario's `address_type` ("public" or "random") as ESP-IDF's `esp_ble_addr_type_t` (0 public, 1 random).
    static func addressType(_ scenarioType: String) -> UInt32 {
        scenarioType == "public" ? 0 : 1
    }

    /// Whether a connect reaches the device: it must be advertising connectable packets.
    var isConnectable: Bool { settings.advertising && peripheral.advertisement.isConnectable }
}

extension DeviceSettings {
    /// The advertisement with what the scenario overrides (name, manufacturer and service data, TX power, level).
    /// The same overrides `SimulatedDevice.advertisement` applies for the BlueZ simulator.
    func overriding(_ advertisement: SimulatedAdvertisement) -> SimulatedAdvertisement {
        var advertisement = advertisement
        if let name { advertisement.localName = name }
        if let manufacturerData { advertisement.manufacturerData = manufacturerData }
        if let serviceData { advertisement.serviceData = serviceData }
        if let txPower { advertisement.txPower = txPower }
        if let rssi { advertisement.rssi = rssi }
        return advertisement
    }
}
