import Testing
@testable import Wearables

/// The PMD control point: feature read, requests, responses, settings. Vectors from `polarofficial/polar-ble-sdk`
/// Android tests under `…/api/ble/model/gatt/client/pmd/` (file and test named at each).
@Suite("Polar PMD control point")
struct PolarControlPointTests {
    @Test("the feature read 0F + bitmap names the types an H10 offers (ECG, ACC) and round-trips")
    func features() throws {
        // Built from the bit positions of PmdMeasurementType.kt `fromByteArray`: ECG bit 0, ACC bit 2, SDK mode byte 2 bit 1.
        let value: [UInt8] = [0x0F, 0x05, 0x02]
        let features = try PMDFeatures.decode(value)
        #expect(features.supportedTypes == [.ecg, .acc, .sdkMode])
        #expect(features.encode() == value)
        #expect(PMDFeatures(offering: [.ecg, .acc, .sdkMode]).encode() == value)
        let all = PMDFeatures(offering: Set(PMDMeasurementType.allCases))
        #expect(all.encode() == [0x0F, 0xEF, 0x7E])
        #expect(all.supportedTypes == Set(PMDMeasurementType.allCases))
        #expect(throws: GATTCodecError.truncated(expected: 3, actual: 2)) { try PMDFeatures.decode([0x0F, 0x05]) }
    }

    @Test("BlePmdClientControlPointResponseTest: F0 01 02 00 00 FF FF FF is a successful ACC settings response")
    func successResponse() throws {
        let bytes: [UInt8] = [0xF0, 0x01, 0x02, 0x00, 0x00, 0xFF, 0xFF, 0xFF]
        let response = try PMDControlPointResponse.decode(bytes)
        #expect(response.opCode == PMDOpCode.getMeasurementSettings.rawValue)
        #expect(response.measurementType == .acc)
        #expect(response.status == .success && response.isSuccess)
        #expect(!response.more)
        #expect(response.parameters == [0xFF, 0xFF, 0xFF])
        #expect(response.encode() == bytes)
    }

    @Test("BlePmdClientControlPointResponseTest: F0 01 06 07 00 is the magnetometer's invalid-resolution error")
    func errorResponse() throws {
        let bytes: [UInt8] = [0xF0, 0x01, 0x06, 0x07, 0x00]
        let response = try PMDControlPointResponse.decode(bytes)
        #expect(response.measurementType == .magnetometer)
        #expect(response.status == .invalidResolution)
        #expect(response.statusCode == 7)
        #expect(!response.more && response.parameters.isEmpty)
        #expect(response.encode() == bytes)
        // A number no case names keeps its value for `vendor_code`.
        let unnamed = try PMDControlPointResponse.decode([0xF0, 0x02, 0x00, 0x2A])
        #expect(unnamed.status == nil && unnamed.statusCode == 42 && unnamed.moreByte == nil)
    }

    @Test("the status codes are the 15 the SDK names, 0 to 14")
    func statusCodes() {
        #expect(PMDResponseStatus.allCases.map(\.rawValue) == Array(0...14))
        #expect(PMDResponseStatus.invalidMTU.rawValue == 10 && PMDResponseStatus.diskFull.summary == "disk full")
    }

    @Test("a response with more parameters to come joins its follow-up's parameters")
    func moreResponses() throws {
        var first = try PMDControlPointResponse.decode([0xF0, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01])
        #expect(first.more)
        first.append(try PMDControlPointResponse.decode([0xF0, 0x01, 0x00, 0x00, 0x00, 0x82, 0x00]))
        #expect(!first.more)
        #expect(try PMDSettings.decode(first.parameters)[.sampleRate] == [130])
    }

    @Test("BlePmdClientTest 'process measurement stop control point command': 01 01 02 stops PPG and ACC")
    func measurementStopped() throws {
        let notice = try PMDControlPointNotice.decode([0x01, 0x01, 0x02])
        #expect(notice == .measurementsStopped([0x01, 0x02]))
        #expect(notice.encode() == [0x01, 0x01, 0x02])
        #expect(try PMDControlPointNotice.decode([0x01]) == .measurementsStopped([]))
        #expect(throws: GATTCodecError.unknownIdentifier(field: "PMD control point response code", value: 0x33)) {
            try PMDControlPointNotice.decode([0x33, 0x00])
        }
    }

    @Test("requests: settings 01 02, start ECG 130 Hz 14 bit, offline ACC start 02 82, stop 03 00, status 05, SDK mode")
    func requests() throws {
        // online_measurement.pdf §1: "for Accelerometer measurement requestByte is … (0 shl 7) | 2 = 2".
        #expect(try PMDControlPointRequest.getSettings(.acc).encode() == [0x01, 0x02])
        // BlePmdClientTest "startMeasurement - succeeds with online ECG": sample rate 130, resolution 14, channels 1.
        let start = PMDControlPointRequest.start(.ecg, settings: [.sampleRate: 130, .resolution: 14, .channels: 1])
        #expect(try start.encode() == [0x02, 0x00, 0x00, 0x01, 0x82, 0x00, 0x01, 0x01, 0x0E, 0x00, 0x04, 0x01, 0x01])
        // BlePmdClientTest "startMeasurement - offline recording type sets high bit in first byte": 0x80 | 2.
        #expect(try PMDControlPointRequest.start(.acc, recording: .offline, settings: [.sampleRate: 50]).encode()
                == [0x02, 0x82, 0x00, 0x01, 0x32, 0x00])
        #expect(try PMDControlPointRequest.stop(.ecg).encode() == [0x03, 0x00])
        #expect(try PMDControlPointRequest.getMeasurementStatus.encode() == [0x05])
        #expect(try PMDControlPointRequest.startSDKMode.encode() == [0x02, 0x09])
        #expect(try PMDControlPointRequest.stopSDKMode.encode() == [0x03, 0x09])
        #expect(try PMDControlPointRequest.getFullSettings(.ppg).encode() == [0x04, 0x01])
        #expect(try PMDControlPointRequest.setOfflineRecordingTrigger(.acc, settings: [.sampleRate: 52]).encode()
                == [0x09, 0x01, 0x02, 0x04, 0x00, 0x01, 0x34, 0x00])
        #expect(try PMDControlPointRequest.setOfflineRecordingTrigger(.ppi, settings: nil).encode() == [0x09, 0x00, 0x03])
    }

    @Test("every request decodes back to itself, a secured start included")
    func requestRoundTrips() throws {
        let key = try PMDSecurity(strategy: .aes128, key: Array(0..<16))
        let requests: [PMDControlPointRequest] = [
            .getSettings(.ecg), .getSettings(.acc, recording: .offline), .getFullSettings(.gyroscope),
            .start(.ecg, settings: [.sampleRate: 130, .resolution: 14]), .start(.ppi),
            .start(.acc, recording: .offline, settings: [.sampleRate: 52, .range: 8, .rangeMilliunit: -1], security: key),
            .start(.ppg, security: try PMDSecurity(strategy: .xor, key: [0x5A])), .stop(.magnetometer),
            .getMeasurementStatus, .getSDKModeStatus, .getOfflineRecordingTriggerStatus, .setOfflineRecordingTriggerMode(2),
            .setOfflineRecordingTrigger(.acc, settings: [.sampleRate: 52]), .setOfflineRecordingTrigger(.ppg, settings: [:]),
            .setOfflineRecordingTrigger(.ecg, settings: nil),
        ]
        for request in requests {
            #expect(try PMDControlPointRequest.decode(request.encode()) == request, "\(request)")
        }
        // The SDK's AES-128 start (BlePmdClientTest "with secret serializes secret"): 06 01 02 + 16 key bytes last.
        let secured = try PMDControlPointRequest.start(.ecg, settings: [.sampleRate: 130, .resolution: 14], security: key).encode()
        #expect(Array(secured.suffix(19)) == [0x06, 0x01, 0x02] + Array(0..<16))
        #expect(throws: GATTCodecError.outOfRange(field: "PMD aes256 key length", value: 3)) {
            try PMDSecurity(strategy: .aes256, key: [1, 2, 3])
        }
        #expect(throws: GATTCodecError.reservedValue(field: "PMD type byte", value: 0x42)) { try PMDControlPointRequest.decode([0x01, 0x42]) }
        #expect(throws: GATTCodecError.unknownIdentifier(field: "PMD op code", value: 0x0A)) { try PMDControlPointRequest.decode([0x0A]) }
        #expect(throws: GATTCodecError.unknownIdentifier(field: "PMD measurement type", value: 4)) { try PMDControlPointRequest.decode([0x03, 0x04]) }
    }

    @Test("PmdSettingTest.testPmdSettingsWithRange: 52 Hz, 16 bit, ranges 245/500/1000/2000, 3 channels")
    func settingsWithRange() throws {
        let bytes: [UInt8] = [0x00, 0x01, 0x34, 0x00, 0x01, 0x01, 0x10, 0x00, 0x02, 0x04,
                              0xF5, 0x00, 0xF4, 0x01, 0xE8, 0x03, 0xD0, 0x07, 0x04, 0x01, 0x03]
        let settings = try PMDSettings.decode(bytes)
        #expect(settings.values == [.sampleRate: [52], .resolution: [16], .range: [245, 500, 1000, 2000], .channels: [3]])
        #expect(settings.factor == nil && settings.security.isEmpty)
        #expect(try settings.encode() == bytes)
    }

    @Test("PmdSettingTest.testPmdSettingWithRangeMilliUnit: milli-unit ranges are signed (-1 and 255)")
    func settingsWithRangeMilliunit() throws {
        let bytes: [UInt8] = [0x03, 0x02, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x01, 0x01, 0x0E, 0x00]
        let settings = try PMDSettings.decode(bytes)
        #expect(settings.values == [.rangeMilliunit: [-1, 255], .resolution: [14]])
        #expect(try PMDSettings.decode(settings.encode()) == settings)
    }

    @Test("PmdSettingTest.testPmdSelectedSerialization: a selection written as a start request reads back")
    func selectedSerialization() throws {
        let selection: PMDSettingSelection = [.sampleRate: 0x7FFF, .resolution: 0, .range: 15, .rangeMilliunit: Int(Int32.max), .channels: 4]
        let request = PMDControlPointRequest.start(.acc, settings: selection)
        let settings = try PMDSettings.decode(Array(request.encode().dropFirst(2)))
        #expect(settings.values == [.sampleRate: [0x7FFF], .resolution: [0], .range: [15], .rangeMilliunit: [Int(Int32.max)], .channels: [4]])
    }

    @Test("BlePmdClientTest 'success response updates factor': a start response's factor 2.5 reads as a Float")
    func factor() throws {
        let response = try PMDControlPointResponse.decode([0xF0, 0x02, 0x01, 0x00, 0x00, 0x05, 0x01, 0x00, 0x00, 0x20, 0x40])
        #expect(try PMDSettings.decode(response.parameters).factor == 2.5)
    }

    @Test("validation names the first requested setting the device does not offer")
    func validation() throws {
        let offered = try PMDSettings.decode([0x00, 0x01, 0x34, 0x00, 0x01, 0x01, 0x10, 0x00, 0x02, 0x04,
                                              0xF5, 0x00, 0xF4, 0x01, 0xE8, 0x03, 0xD0, 0x07, 0x04, 0x01, 0x03])
        #expect(PMDSettings.validate(requested: [.sampleRate: 52, .range: 500, .resolution: 16], against: offered) == nil)
        #expect(PMDSettings.validate(requested: [.sampleRate: 200, .range: 7], against: offered)
                == PMDSettingRejection(type: .sampleRate, requested: 200, offered: [52]))
        #expect(PMDSettings.validate(requested: [.range: 7, .channels: 3], against: offered)
                == PMDSettingRejection(type: .range, requested: 7, offered: [245, 500, 1000, 2000]))
        #expect(PMDSettings.validate(requested: [.rangeMilliunit: 1], against: offered)
                == PMDSettingRejection(type: .rangeMilliunit, requested: 1, offered: []))
        #expect(PMDSettings.validate(requested: [.factor: 1], against: offered) == nil)
        #expect(offered.largest == [.sampleRate: 52, .resolution: 16, .range: 2000, .channels: 3])
    }

    @Test("settings refuse an unknown type, a cut value and values their width cannot hold")
    func settingsErrors() throws {
        #expect(throws: GATTCodecError.unknownIdentifier(field: "PMD setting type", value: 7)) { try PMDSettings.decode([0x07, 0x00]) }
        #expect(throws: GATTCodecError.truncated(expected: 4, actual: 3)) { try PMDSettings.decode([0x00, 0x01, 0x34]) }
        #expect(try PMDSettings.decode([0x00]) == PMDSettings())
        #expect(throws: GATTCodecError.outOfRange(field: "PMD setting sampleRate", value: 70_000)) {
            try PMDSettings(values: [.sampleRate: [70_000]]).encode()
        }
        // A repeated type adds to the first (as in the SDK); past 255 values encoding continues in a second TLV
        // (found by the polar fuzz target: a list that could not be written back).
        let long = PMDSettings(values: [.channels: (0..<300).map { $0 % 256 }])
        #expect(try PMDSettings.decode(long.encode()) == long)
        #expect(try long.encode().count == 2 + 255 + 2 + 45)
        let security = try PMDSettings.decode([0x06, 0x01] + Array(repeating: 0xAB, count: 16))
        #expect(security.security == [Array(repeating: 0xAB, count: 16)])
        #expect(try PMDSettings.decode(security.encode()) == security)
    }

    @Test("the measurement status response's bytes: top bits online/offline, low bits the type")
    func measurementStatus() {
        // PmdActiveMeasurement.kt: mask 0xC0, 1 online, 2 offline, 3 both.
        let status = PMDMeasurementStatus.decode(parameters: [0x40, 0x82, 0xC3, 0x01, 0x49])
        #expect(status.activities == [.ecg: .online, .acc: .offline, .ppi: [.online, .offline], .ppg: []])
        #expect(status.encode() == [0x40, 0x01, 0x82, 0xC3])
    }

    @Test("Polar advertised names give the model; other names none")
    func advertisedNames() {
        #expect(PolarUUID.model(fromAdvertisedName: "Polar H10 20346EAB") == "H10")
        #expect(PolarUUID.model(fromAdvertisedName: "Polar Verity Sense 0A3BA92B") == "Verity Sense")
        #expect(PolarUUID.model(fromAdvertisedName: "Polar H10") == nil)
        #expect(PolarUUID.model(fromAdvertisedName: "InfiniTime") == nil)
        #expect(PolarUUID.Service.measurementData == "fb005c80-02e7-f387-1cad-8acd2d8df0c8")
    }
}
