import Testing
import Wearables

@Suite("Battery, Immediate Alert and Device Information")
struct DeviceCharacteristicTests {
    @Test("battery level is a percentage 0…100")
    func batteryLevel() throws {
        try expectCodes(try BatteryLevel(percent: 0), as: [0x00])
        try expectCodes(try BatteryLevel(percent: 57), as: [0x39])
        try expectCodes(try BatteryLevel(percent: 100), as: [0x64])
        #expect(throws: GATTCodecError.outOfRange(field: "battery level", value: 101)) {
            try BatteryLevel.decode([0x65])
        }
        #expect(throws: GATTCodecError.outOfRange(field: "battery level", value: 255)) {
            try BatteryLevel.decode([0xFF])
        }
        #expect(throws: GATTCodecError.outOfRange(field: "battery level", value: -1)) { try BatteryLevel(percent: -1) }
        // A padded value still reads its first byte.
        #expect(try BatteryLevel.decode([0x32, 0x00]).percent == 50)
    }

    @Test("alert level 0 none, 1 mild, 2 high; 3 and up are reserved")
    func alertLevel() throws {
        try expectCodes(AlertLevel.none, as: [0x00])
        try expectCodes(AlertLevel.mild, as: [0x01])
        try expectCodes(AlertLevel.high, as: [0x02])
        #expect(throws: GATTCodecError.reservedValue(field: "alert level", value: 3)) { try AlertLevel.decode([0x03]) }
    }

    @Test("device information strings are UTF-8 with trailing NULs cut off")
    func strings() throws {
        #expect(try DeviceInformationString.decode([0x41, 0x63, 0x6D, 0x65, 0x00, 0x00]) == "Acme")
        #expect(try DeviceInformationString.decode([0x76, 0x31, 0x2E, 0x32]) == "v1.2")
        #expect(try DeviceInformationString.decode([0xC3, 0xA9]) == "é")
        // Only trailing NULs: one inside the string is content.
        #expect(try DeviceInformationString.decode([0x41, 0x00, 0x42]) == "A\u{0}B")
        #expect(try DeviceInformationString.decode([]) == "")
        #expect(try DeviceInformationString.decode([0x00, 0x00]) == "")
        #expect(DeviceInformationString.encode("Polar H10") == [0x50, 0x6F, 0x6C, 0x61, 0x72, 0x20, 0x48, 0x31, 0x30])
    }

    @Test("a string that is not UTF-8 is refused")
    func invalidUTF8() {
        #expect(throws: GATTCodecError.invalidUTF8) { try DeviceInformationString.decode([0xFF]) }
        // A two-byte sequence cut after its first byte.
        #expect(throws: GATTCodecError.invalidUTF8) { try DeviceInformationString.decode([0x41, 0xC3]) }
        #expect(throws: GATTCodecError.invalidUTF8) { try DeviceInformationString.decode([0xC3, 0x00]) }
    }

    @Test("system id: 40-bit manufacturer identifier, then 24-bit OUI")
    func systemID() throws {
        let bytes: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x0A, 0x0B, 0x0C]
        let expected = try SystemID(manufacturerIdentifier: 0x05_0403_0201, organizationallyUniqueIdentifier: 0x0C0B0A)
        try expectCodes(expected, as: bytes)
        expectEveryPrefixTruncated(SystemID.self, bytes)
        #expect(throws: GATTCodecError.self) {
            try SystemID(manufacturerIdentifier: 1 << 40, organizationallyUniqueIdentifier: 0)
        }
        #expect(throws: GATTCodecError.self) {
            try SystemID(manufacturerIdentifier: 0, organizationallyUniqueIdentifier: 1 << 24)
        }
    }

    @Test("PnP id: source, vendor, product, version")
    func pnpID() throws {
        let bytes: [UInt8] = [0x01, 0x0D, 0x00, 0x34, 0x12, 0x10, 0x01]
        let expected = PnPID(vendorIDSource: .bluetoothSIG, vendorID: 0x000D, productID: 0x1234, productVersion: 0x0110)
        try expectCodes(expected, as: bytes)
        expectEveryPrefixTruncated(PnPID.self, bytes)
        #expect(try PnPID.decode([0x02, 0x0D, 0x00, 0x34, 0x12, 0x10, 0x01]).vendorIDSource == .usbImplementersForum)
        #expect(try PnPID.decode([0x09, 0x0D, 0x00, 0x34, 0x12, 0x10, 0x01]).vendorIDSource == .unknown(9))
    }
}
