/// The native API's message ids (the `(id)` option of each message in ESPHome's api.proto), for the messages
/// a Bluetooth proxy client uses. Written by Protobuf/trim.py; do not edit.
public enum APIMessageType: UInt32, Sendable, CaseIterable {
    case helloRequest = 1
    case helloResponse = 2
    case disconnectRequest = 5
    case disconnectResponse = 6
    case pingRequest = 7
    case pingResponse = 8
    case deviceInfoRequest = 9
    case deviceInfoResponse = 10
    case subscribeBluetoothLEAdvertisementsRequest = 66
    case bluetoothLERawAdvertisementsResponse = 93
    case bluetoothDeviceRequest = 68
    case bluetoothDeviceConnectionResponse = 69
    case bluetoothGATTGetServicesRequest = 70
    case bluetoothGATTGetServicesResponse = 71
    case bluetoothGATTGetServicesDoneResponse = 72
    case bluetoothGATTReadRequest = 73
    case bluetoothGATTReadResponse = 74
    case bluetoothGATTWriteRequest = 75
    case bluetoothGATTReadDescriptorRequest = 76
    case bluetoothGATTWriteDescriptorRequest = 77
    case bluetoothGATTNotifyRequest = 78
    case bluetoothGATTNotifyDataResponse = 79
    case subscribeBluetoothConnectionsFreeRequest = 80
    case bluetoothConnectionsFreeResponse = 81
    case bluetoothGATTErrorResponse = 82
    case bluetoothGATTWriteResponse = 83
    case bluetoothGATTNotifyResponse = 84
    case bluetoothDevicePairingResponse = 85
    case bluetoothDeviceUnpairingResponse = 86
    case unsubscribeBluetoothLEAdvertisementsRequest = 87
    case bluetoothDeviceClearCacheResponse = 88
    case bluetoothScannerStateResponse = 126
    case bluetoothScannerSetModeRequest = 127
}
