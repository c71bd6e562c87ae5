import BlueZ
import ESPHome
@testable import Simulator
import SimulatedWearables
import Testing

/// The simulated proxy's pure parts: slots as ESPHome accounts them, the advertisement batches, the AD structures on
/// the air, addresses and UUIDs as the API carries them, and the attribute table by handle.
@Suite struct ESPHomeProxyPureTests {
    @Test("a slot is taken by the connect request, a device holds one, a full proxy refuses and changes nothing")
    func slots() {
        var slots = ConnectionSlots(limit: 2)
        let answers = [slots.reserve(0xC0FFEE000001), slots.reserve(0xC0FFEE000001), slots.reserve(0xC0FFEE000002),
                       slots.reserve(0xC0FFEE000003)]
        #expect(answers == [.reserved, .alreadyHeld, .reserved, .full])
        #expect(slots.response.free == 0 && slots.response.limit == 2)
        #expect(slots.response.allocated == [0xC0FFEE000001, 0xC0FFEE000002])
        let released = [slots.release(0xC0FFEE000001), slots.release(0xC0FFEE000001)]
        #expect(released == [true, false])
        let again = slots.reserve(0xC0FFEE000003)
        #expect(again == .reserved)
        // The freed slot is reused: allocated keeps slot order, as ESPHome's array does.
        #expect(slots.allocated == [0xC0FFEE000003, 0xC0FFEE000002])
    }

    @Test("advertisements go out 16 to a message, the rest on the tick")
    func batches() {
        var batcher = AdvertisementBatcher()
        var sent: [Int] = []
        for index in 0..<20 {
            var advertisement = BluetoothLERawAdvertisement()
            advertisement.address = UInt64(index)
            if let batch = batcher.append(advertisement) { sent.append(batch.advertisements.count) }
        }
        #expect(sent == [16])
        let rest = batcher.flush()
        let nothing = batcher.flush()
        #expect(rest?.advertisements.map(\.address) == [16, 17, 18, 19])
        #expect(nothing == nil)
        #expect(batcher.isEmpty)
    }

    @Test("the AD structures carry flags, 16-bit UUIDs, the name and manufacturer data, in 62 bytes at most")
    func advertisingData() {
        let advertisement = SimulatedAdvertisement(localName: "HRM-Proxy", serviceUUIDs: [BluetoothUUID(0x180D), BluetoothUUID(0x180F)],
                                                   manufacturerData: [0x006B: [1, 2]], appearance: 0x0341)
        let bytes = AdvertisingData.bytes(advertisement)
        #expect(Array(bytes.prefix(3)) == [2, 0x01, 0x06])
        #expect(Array(bytes[3..<9]) == [5, 0x03, 0x0D, 0x18, 0x0F, 0x18])
        #expect(Array(bytes[9..<13]) == [3, 0x19, 0x41, 0x03])
        #expect(Array(bytes[13..<24]) == [10, 0x09] + Array("HRM-Proxy".utf8))
        #expect(Array(bytes[24...]) == [5, 0xFF, 0x6B, 0x00, 1, 2])

        let long = SimulatedAdvertisement(localName: String(repeating: "N", count: 40), serviceUUIDs: [],
                                          manufacturerData: [0x0059: Array(repeating: 7, count: 24)])
        let packed = AdvertisingData.bytes(long)
        #expect(packed.count <= 62)
        var types: [UInt8] = []
        var index = 0
        while index < packed.count {
            types.append(packed[index + 1])
            index += Int(packed[index]) + 1
        }
        #expect(index == packed.count)
        // The name no longer fits whole: shortened to the scan response, which has the most room left.
        #expect(types == [0x01, 0xFF, 0x08])
    }

    @Test("addresses are six bytes in one uint64, most significant first, and back")
    func addresses() {
        let address = BluetoothAddress("C0:FF:EE:00:00:01")!
        #expect(ProxyAddress.uint64(address) == 0xC0FFEE000001)
        #expect(ProxyAddress.address(0xC0FFEE000001) == address)
        #expect(ProxiedDevice.addressType("public") == 0 && ProxiedDevice.addressType("random") == 1)
    }

    @Test("a 128-bit UUID is two uint64s as ESPHome splits it; 16-bit ones are short_uuid for API 1.12 clients")
    func uuids() throws {
        let uuid = try #require(BluetoothUUID(string: "6e400001-b5a3-f393-e0a9-e50e24dcca9e"))
        #expect(ProxyGATTTable.splitUUID(uuid) == [0x6E40_0001_B5A3_F393, 0xE0A9_E50E_24DC_CA9E])
        #expect(ProxyGATTTable.splitUUID(BluetoothUUID(0x180D)) == [0x0000_180D_0000_1000, 0x8000_0080_5F9B_34FB])

        let strap = try SimulatedHeartRateStrap(SimulatedDeviceConfiguration(seed: 3))
        let table = ProxyGATTTable(GATTLayout(deviceServices: strap.services, deviceName: strap.deviceName, appearance: nil))
        let efficient = table.servicesResponses(address: 1, efficientUUIDs: true).flatMap(\.services)
        let legacy = table.servicesResponses(address: 1, efficientUUIDs: false).flatMap(\.services)
        #expect(efficient.map(\.shortUuid).prefix(3) == [0x1800, 0x1801, 0x180D])
        #expect(efficient.allSatisfy { $0.uuid.isEmpty })
        #expect(legacy.allSatisfy { $0.shortUuid == 0 && $0.uuid.count == 2 })
        #expect(efficient.map(\.handle) == legacy.map(\.handle))
    }

    @Test("characteristics are named by their value handle, descriptors by theirs; the CCCD follows the value")
    func handles() throws {
        let strap = try SimulatedHeartRateStrap(SimulatedDeviceConfiguration(seed: 3))
        let table = ProxyGATTTable(GATTLayout(deviceServices: strap.services, deviceName: strap.deviceName, appearance: nil))
        let measurement = try #require(table.valueHandle(of: BluetoothUUID(0x2A37)))
        guard case .value(let characteristic)? = table.attribute(UInt32(measurement)) else {
            Issue.record("no characteristic at \(measurement)")
            return
        }
        #expect(characteristic.uuid == BluetoothUUID(0x2A37))
        guard case .descriptor(_, let cccd)? = table.attribute(UInt32(measurement) + 1) else {
            Issue.record("no descriptor after \(measurement)")
            return
        }
        #expect(cccd.isClientConfiguration)
        #expect(table.attribute(0) == nil && table.attribute(0x1_0000) == nil)
        // Declarations are not attributes the API names.
        #expect(table.attribute(UInt32(measurement) - 1) == nil)
    }
}
