/// A request written to the PMD control point: the op code, then what it needs.
///
/// Layouts: `polarofficial/polar-ble-sdk` Android `pmd/BlePMDClient.kt` — `querySettings` / `queryFullSettings`
/// (op code, recording type << 7 | measurement type), `startMeasurement` (op code, that byte, the selected
/// settings, the security setting), `stopMeasurement` (op code, measurement type), `readMeasurementStatus`,
/// `isSdkModeEnabled` and `getOfflineRecordingTriggerStatus` (op code alone), `setOfflineRecordingTriggerMode`
/// (op code, mode), `setOfflineRecordingTriggerSetting` (op code, status, type, then for an enabled trigger a
/// length byte and the settings). SDK mode is started and stopped as the measurement `sdkMode`
/// (`startSDKMode`, `stopSDKMode`). The start request's first bytes are also in `BlePmdClientTest.kt`
/// ("startMeasurement - offline recording type sets high bit in first byte").
///
/// `decode` exists for the simulated sensors, which read what a driver writes; it refuses a type byte with
/// bit 6 set (no type uses it, so it could not be written back) and, for a stop, any recording bit. Settings
/// may come in any order (the SDK writes them in its map's order) and a repeated type keeps its last value;
/// `encode` writes them in type order, so `decode(encode(x)) == x` while the bytes may differ.
public enum PMDControlPointRequest: Sendable, Hashable {
    case getSettings(PMDMeasurementType, recording: PMDRecordingType = .online)
    case getFullSettings(PMDMeasurementType, recording: PMDRecordingType = .online)
    case start(PMDMeasurementType, recording: PMDRecordingType = .online, settings: PMDSettingSelection = [:],
               security: PMDSecurity? = nil)
    case stop(PMDMeasurementType)
    case getMeasurementStatus
    case getSDKModeStatus
    case getOfflineRecordingTriggerStatus
    /// 0 disables the triggers, 1 starts the recordings when the device starts, 2 when an exercise starts
    /// (`PmdOfflineRecTriggerMode`).
    case setOfflineRecordingTriggerMode(UInt8)
    /// Enables (with `settings`, which may be empty) or, with nil, disables one measurement's offline trigger.
    case setOfflineRecordingTrigger(PMDMeasurementType, settings: PMDSettingSelection?)

    public static let startSDKMode = PMDControlPointRequest.start(.sdkMode)
    public static let stopSDKMode = PMDControlPointRequest.stop(.sdkMode)

    public var opCode: PMDOpCode {
        switch self {
        case .getSettings: .getMeasurementSettings
        case .getFullSettings: .getFullMeasurementSettings
        case .start: .startMeasurement
        case .stop: .stopMeasurement
        case .getMeasurementStatus: .getMeasurementStatus
        case .getSDKModeStatus: .getSDKModeStatus
        case .getOfflineRecordingTriggerStatus: .getOfflineRecordingTriggerStatus
        case .setOfflineRecordingTriggerMode: .setOfflineRecordingTriggerMode
        case .setOfflineRecordingTrigger: .setOfflineRecordingTriggerSettings
        }
    }

    /// Throws `outOfRange` only for an offline trigger whose settings are longer than a length byte can say.
    public func encode() throws(GATTCodecError) -> [UInt8] {
        var bytes = [opCode.rawValue]
        switch self {
        case .getSettings(let type, let recording), .getFullSettings(let type, let recording):
            bytes.append(recording.bitField | type.rawValue)
        case .start(let type, let recording, let settings, let security):
            bytes.append(recording.bitField | type.rawValue)
            bytes += settings.encode() + (security?.encode() ?? [])
        case .stop(let type):
            bytes.append(type.rawValue)
        case .getMeasurementStatus, .getSDKModeStatus, .getOfflineRecordingTriggerStatus:
            break
        case .setOfflineRecordingTriggerMode(let mode):
            bytes.append(mode)
        case .setOfflineRecordingTrigger(let type, let settings):
            bytes += [settings == nil ? 0 : 1, type.rawValue]
            if let settings {
                let encoded = settings.encode()
                guard encoded.count <= 255 else { throw .outOfRange(field: "PMD trigger settings length", value: encoded.count) }
                bytes += [UInt8(encoded.count)] + encoded
            }
        }
        return bytes
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> PMDControlPointRequest {
        var reader = ByteReader(bytes)
        let opByte = try reader.readUInt8()
        guard let opCode = PMDOpCode(rawValue: opByte) else {
            throw .unknownIdentifier(field: "PMD op code", value: Int(opByte))
        }
        let request: PMDControlPointRequest
        switch opCode {
        case .getMeasurementSettings:
            let (type, recording) = try readTypeByte(&reader)
            request = .getSettings(type, recording: recording)
        case .getFullMeasurementSettings:
            let (type, recording) = try readTypeByte(&reader)
            request = .getFullSettings(type, recording: recording)
        case .startMeasurement:
            let (type, recording) = try readTypeByte(&reader)
            var settings = PMDSettingSelection()
            var security: PMDSecurity?
            while !reader.isAtEnd {
                let setting = try readSetting(&reader)
                if let setting { settings[setting.type] = setting.value } else { security = try PMDSecurity.decode(after: &reader) }
            }
            request = .start(type, recording: recording, settings: settings, security: security)
        case .stopMeasurement:
            let (type, recording) = try readTypeByte(&reader)
            guard recording == .online else { throw .reservedValue(field: "PMD stop type byte", value: 0x80 | Int(type.rawValue)) }
            request = .stop(type)
        case .getMeasurementStatus: request = .getMeasurementStatus
        case .getSDKModeStatus: request = .getSDKModeStatus
        case .getOfflineRecordingTriggerStatus: request = .getOfflineRecordingTriggerStatus
        case .setOfflineRecordingTriggerMode: request = .setOfflineRecordingTriggerMode(try reader.readUInt8())
        case .setOfflineRecordingTriggerSettings:
            let status = try reader.readUInt8()
            let (type, recording) = try readTypeByte(&reader)
            guard recording == .online else { throw .reservedValue(field: "PMD trigger type byte", value: 0x80 | Int(type.rawValue)) }
            switch status {
            case 0: request = .setOfflineRecordingTrigger(type, settings: nil)
            case 1:
                let length = Int(try reader.readUInt8())
                var inner = ByteReader(Array(try reader.readBytes(length)))
                var settings = PMDSettingSelection()
                while !inner.isAtEnd {
                    guard let setting = try readSetting(&inner) else {
                        throw .reservedValue(field: "PMD trigger security setting", value: Int(PMDSettingType.security.rawValue))
                    }
                    settings[setting.type] = setting.value
                }
                request = .setOfflineRecordingTrigger(type, settings: settings)
            default: throw .outOfRange(field: "PMD trigger status", value: Int(status))
            }
        }
        guard reader.isAtEnd else { throw .outOfRange(field: "PMD request length", value: bytes.count) }
        return request
    }

    private static func readTypeByte(_ reader: inout ByteReader) throws(GATTCodecError) -> (PMDMeasurementType, PMDRecordingType) {
        let byte = try reader.readUInt8()
        guard byte & 0x40 == 0 else { throw .reservedValue(field: "PMD type byte", value: Int(byte)) }
        guard let type = PMDMeasurementType(typeByte: byte) else {
            throw .unknownIdentifier(field: "PMD measurement type", value: Int(byte & PMDMeasurementType.typeMask))
        }
        return (type, PMDRecordingType(typeByte: byte))
    }

    /// One selected setting (type, count 1, value), or nil when the type is security (its bytes are still unread).
    private static func readSetting(_ reader: inout ByteReader) throws(GATTCodecError) -> (type: PMDSettingType, value: Int)? {
        let typeByte = try reader.readUInt8()
        guard let type = PMDSettingType(rawValue: typeByte) else {
            throw .unknownIdentifier(field: "PMD setting type", value: Int(typeByte))
        }
        if type == .security { return nil }
        let count = try reader.readUInt8()
        guard count == 1 else { throw .outOfRange(field: "PMD selected setting count", value: Int(count)) }
        return (type, type.value(from: try reader.readBytes(type.valueWidth)))
    }
}
