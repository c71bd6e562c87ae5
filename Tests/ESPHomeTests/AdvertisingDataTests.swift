import Testing

@testable import ESPHome

/// AD structures as a proxy forwards them, decoded into what BlueZ would show: vectors built from the Core
/// Specification Supplement's structure types (flags, 16- and 128-bit service UUID lists, complete and shortened names,
/// TX power, service data, appearance, manufacturer data) as a heart-rate strap and a Polar H10 advertise; every
/// truncation keeps the structures before the cut; random bytes never crash.
@Suite("ESPHome: advertising data")
struct AdvertisingDataTests {
    /// Flags 0x06; 16-bit UUIDs 180D and 180F; complete name "HRM-Demo"; TX power -4; appearance 0x0341 (heart-rate
    /// belt); Polar's company id 0x006B with two bytes; service data for 0x180F: 84.
    static let strap: [UInt8] = [0x02, 0x01, 0x06, 0x05, 0x03, 0x0D, 0x18, 0x0F, 0x18,
                                 0x09, 0x09] + Array("HRM-Demo".utf8) + [0x02, 0x0A, 0xFC, 0x03, 0x19, 0x41, 0x03,
                                 0x05, 0xFF, 0x6B, 0x00, 0x01, 0x02, 0x04, 0x16, 0x0F, 0x18, 84]

    @Test("a strap's advertisement: every field where BlueZ would put it")
    func strapAdvertisement() {
        let data = AdvertisingData(decoding: Self.strap)
        #expect(data.flags == 0x06)
        #expect(data.serviceUUIDs == ["0000180d-0000-1000-8000-00805f9b34fb", "0000180f-0000-1000-8000-00805f9b34fb"])
        #expect(data.localName == "HRM-Demo")
        #expect(data.txPower == -4)
        #expect(data.appearance == 0x0341)
        #expect(data.manufacturerData == [0x006B: [0x01, 0x02]])
        #expect(data.serviceData == ["0000180f-0000-1000-8000-00805f9b34fb": [84]])
    }

    @Test("a 128-bit UUID (Polar's PMD service) in the air's little-endian order; a shortened name when no complete one")
    func longUUIDAndShortName() {
        // FB005C80-02E7-F387-1CAD-8ACD2D8DF0C8, written least significant byte first.
        let pmd: [UInt8] = [0xC8, 0xF0, 0x8D, 0x2D, 0xCD, 0x8A, 0xAD, 0x1C, 0x87, 0xF3, 0xE7, 0x02, 0x80, 0x5C, 0x00, 0xFB]
        let data = AdvertisingData(decoding: [0x11, 0x07] + pmd + [0x05, 0x08] + Array("H10 ".utf8))
        #expect(data.serviceUUIDs == ["fb005c80-02e7-f387-1cad-8acd2d8df0c8"])
        #expect(data.localName == "H10 ")
    }

    @Test("ESPHome's UUID forms: two uint64 words, high first, or a short UUID on the base")
    func apiUUIDs() {
        #expect(ProxyUUID.fromAPI([0x0000_180D_0000_1000, 0x8000_0080_5F9B_34FB], short: 0) == "0000180d-0000-1000-8000-00805f9b34fb")
        #expect(ProxyUUID.fromAPI([], short: 0x2A37) == "00002a37-0000-1000-8000-00805f9b34fb")
        #expect(ProxyUUID.fromAPI([0xFB00_5C80_02E7_F387, 0x1CAD_8ACD_2D8D_F0C8], short: 0) == "fb005c80-02e7-f387-1cad-8acd2d8df0c8")
        #expect(ProxyUUID.fromAPI([], short: 0) == nil)
    }

    @Test("every truncation keeps the whole structures before the cut")
    func truncations() {
        let whole = AdvertisingData(decoding: Self.strap)
        for cut in 0..<Self.strap.count {
            let part = AdvertisingData(decoding: Array(Self.strap.prefix(cut)))
            let known = part.serviceUUIDs.allSatisfy { uuid in whole.serviceUUIDs.contains(uuid) }
            #expect(known)
            if part.localName != nil { #expect(part.localName == "HRM-Demo") }
            if cut >= 9 { #expect(part.serviceUUIDs.count == 2) }
        }
        #expect(AdvertisingData(decoding: []) == AdvertisingData())
        // A zero length ends the significant part (the rest is padding).
        #expect(AdvertisingData(decoding: [0x02, 0x01, 0x06, 0x00, 0x03, 0x03, 0x0D, 0x18]).serviceUUIDs.isEmpty)
    }

    @Test("random bytes decode to something or nothing, never a crash", arguments: 0..<4)
    func random(seed: UInt64) {
        var generator = SplitMix(seed: seed)
        for _ in 0..<2000 {
            let bytes = (0..<Int(generator.next() % 40)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let data = AdvertisingData(decoding: bytes)
            let wellFormed = data.serviceUUIDs.allSatisfy { uuid in uuid.count == 36 }
            #expect(wellFormed)
        }
    }
}
