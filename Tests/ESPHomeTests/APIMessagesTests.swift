import Foundation
import SwiftProtobuf
import Testing

@testable import ESPHome

/// The protobuf messages cut from ESPHome's api.proto: field numbers and types as ESPHome's, checked against encodings
/// worked out from the protobuf wire format by hand, and the message ids against the published schema's.
@Suite("ESPHome: API messages")
struct APIMessagesTests {
    @Test("HelloRequest encodes as protobuf does: field 1 string, fields 2 and 3 varints")
    func hello() throws {
        var hello = HelloRequest()
        hello.clientInfo = "wear2mqtt"
        hello.apiVersionMajor = 1
        hello.apiVersionMinor = 10
        let bytes: [UInt8] = try hello.serializedBytes()
        #expect(bytes == [0x0A, 0x09] + Array("wear2mqtt".utf8) + [0x10, 0x01, 0x18, 0x0A])
        #expect(try HelloRequest(serializedBytes: bytes) == hello)
    }

    @Test("DeviceInfoResponse carries the proxy's feature flags in field 15 and its name in field 2")
    func deviceInfo() throws {
        // field 2 (name) "kitchen", field 15 (bluetooth_proxy_feature_flags) 0x27: tag 15 << 3 = 0x78.
        let bytes: [UInt8] = [0x12, 0x07] + Array("kitchen".utf8) + [0x78, 0x27]
        let info = try DeviceInfoResponse(serializedBytes: bytes)
        #expect(info.name == "kitchen")
        let features = BluetoothProxyFeatures(rawValue: info.bluetoothProxyFeatureFlags)
        #expect(features.isSuperset(of: .required))
        #expect(!features.contains(.pairing))
    }

    @Test("raw advertisements: a batch of address (uint64), RSSI (sint32), address type and data")
    func rawAdvertisements() throws {
        var advertisement = BluetoothLERawAdvertisement()
        advertisement.address = 0xC0FF_EE00_0001
        advertisement.rssi = -67
        advertisement.addressType = 1
        advertisement.data = Data([0x02, 0x01, 0x06])
        var batch = BluetoothLERawAdvertisementsResponse()
        batch.advertisements = [advertisement, advertisement]
        let decoded = try BluetoothLERawAdvertisementsResponse(serializedBytes: batch.serializedBytes() as [UInt8])
        #expect(decoded.advertisements.count == 2)
        #expect(decoded.advertisements[0].rssi == -67)
        // sint32 is zigzag: -67 is 133, so field 2 is 0x10 0x85 0x01.
        let single: [UInt8] = try advertisement.serializedBytes()
        #expect(single.starts(with: [0x08]) && single.contains(0x10))
        #expect(Array(single[single.firstIndex(of: 0x10)!...].prefix(3)) == [0x10, 0x85, 0x01])
    }

    @Test("message ids as ESPHome numbers them")
    func ids() {
        #expect(APIMessageType.helloRequest.rawValue == 1)
        #expect(APIMessageType.deviceInfoResponse.rawValue == 10)
        #expect(APIMessageType.subscribeBluetoothLEAdvertisementsRequest.rawValue == 66)
        #expect(APIMessageType.bluetoothDeviceRequest.rawValue == 68)
        #expect(APIMessageType.bluetoothGATTNotifyDataResponse.rawValue == 79)
        #expect(APIMessageType.bluetoothConnectionsFreeResponse.rawValue == 81)
        #expect(APIMessageType.bluetoothLERawAdvertisementsResponse.rawValue == 93)
        #expect(Set(APIMessageType.allCases.map(\.rawValue)).count == APIMessageType.allCases.count)
    }
}
