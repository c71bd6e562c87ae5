import Wearables

// Nordic Legacy DFU (nRF5 SDK 4.3 – 11 bootloaders), as documented by NordicSemiconductor/Android-DFU-Library
// (`LegacyDfuImpl.java`) and the SDK 11 bootloader (`dfu_transport_ble.c`, `dfu_init_template.c`). Only the
// bytes live here; `LegacyDFUClient` and `LegacyDFUTarget` are the state machines.

/// The Legacy DFU service and characteristics, in lower case as BlueZ reports UUIDs.
public enum LegacyDFUUUID {
    public static let service = "00001530-1212-efde-1523-785feabcd123"
    /// Requests (write with response) and responses and receipts (notify).
    public static let controlPoint = "00001531-1212-efde-1523-785feabcd123"
    /// Image sizes, the init packet and the image, written without response.
    public static let packet = "00001532-1212-efde-1523-785feabcd123"
    /// `LegacyDFUVersion`, read-only; absent on bootloaders older than SDK 7.
    public static let version = "00001534-1212-efde-1523-785feabcd123"
}

public enum LegacyDFUOpcode: UInt8, Sendable, CaseIterable {
    /// `01 mode`, then the three sizes on the packet characteristic.
    case start = 0x01
    /// `02 00`, the init packet on the packet characteristic, `02 01`.
    case initParameters = 0x02
    /// `03`, then the image on the packet characteristic; answered once all of it arrived.
    case receiveFirmware = 0x03
    case validate = 0x04
    /// Not answered: the bootloader resets into the new image.
    case activateAndReset = 0x05
    /// Not answered: the bootloader abandons the transfer and resets.
    case reset = 0x06
    /// Answered with the number of image bytes received.
    case reportReceivedImageSize = 0x07
    /// `08 n:u16` — a receipt after every n-th image packet; not answered.
    case packetReceiptNotificationRequest = 0x08

    /// The first byte of a response: `10 opcode status`.
    public static let responseCode: UInt8 = 0x10
    /// The first byte of a receipt: `11 bytes received:u32`.
    public static let packetReceiptCode: UInt8 = 0x11
}

/// Which images a transfer carries (the Start request's mode byte). The SDK 11 bootloader takes an application on
/// its own, or a SoftDevice and/or bootloader without one.
public struct LegacyDFUImageType: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let softDevice = LegacyDFUImageType(rawValue: 0x01)
    public static let bootloader = LegacyDFUImageType(rawValue: 0x02)
    public static let application = LegacyDFUImageType(rawValue: 0x04)
}

/// The third byte of a response (`ble_dfu_resp_val_t`).
public struct LegacyDFUStatus: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = LegacyDFUStatus(rawValue: 1)
    /// A request out of order, or a Start while an earlier transfer is still open.
    public static let invalidState = LegacyDFUStatus(rawValue: 2)
    /// The requested combination of images, or an image size that is not a multiple of 4.
    public static let notSupported = LegacyDFUStatus(rawValue: 3)
    public static let dataSizeExceedsLimit = LegacyDFUStatus(rawValue: 4)
    /// Validate found an image whose CRC-16 is not the init packet's.
    public static let crcError = LegacyDFUStatus(rawValue: 5)
    public static let operationFailed = LegacyDFUStatus(rawValue: 6)

    public var sdkName: String {
        switch self {
        case .success: "SUCCESS"
        case .invalidState: "INVALID_STATE"
        case .notSupported: "NOT_SUPPORTED"
        case .dataSizeExceedsLimit: "DATA_SIZE"
        case .crcError: "CRC_ERROR"
        case .operationFailed: "OPER_FAILED"
        default: "status \(rawValue)"
        }
    }

    public var description: String { sdkName }
}

/// A control point write. The client encodes these; the simulated bootloader decodes them.
public enum LegacyDFURequest: Equatable, Sendable {
    case start(LegacyDFUImageType)
    /// `01` alone, then the application's size as one u32: DFU v1, what bootloaders before SDK 7 (4.3 – 6.x) take.
    /// Android-DFU-Library's `OP_CODE_START_DFU_V1`, sent after such a bootloader refused the Start with a mode.
    case startV1
    /// `complete` false opens the init packet, true closes it and asks for its validation.
    case initParameters(complete: Bool)
    /// `02` alone, then the init packet, answered once it arrived: DFU v1 (Android-DFU-Library's
    /// `OP_CODE_INIT_DFU_PARAMS`, "SDK 6.0.0 or older").
    case initParametersV1
    case receiveFirmware
    case validate
    case activateAndReset
    case reset
    case reportReceivedImageSize
    case packetReceiptNotificationRequest(UInt16)

    public var opcode: LegacyDFUOpcode {
        switch self {
        case .start, .startV1: .start
        case .initParameters, .initParametersV1: .initParameters
        case .receiveFirmware: .receiveFirmware
        case .validate: .validate
        case .activateAndReset: .activateAndReset
        case .reset: .reset
        case .reportReceivedImageSize: .reportReceivedImageSize
        case .packetReceiptNotificationRequest: .packetReceiptNotificationRequest
        }
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(opcode.rawValue)
        switch self {
        case .start(let type): writer.write(type.rawValue)
        case .initParameters(let complete): writer.write(complete ? UInt8(0x01) : 0x00)
        case .packetReceiptNotificationRequest(let interval): writer.write(interval)
        case .startV1, .initParametersV1, .receiveFirmware, .validate, .activateAndReset, .reset,
             .reportReceivedImageSize: break
        }
        return writer.bytes
    }

    /// Throws `unknownIdentifier` for an opcode outside the protocol, `truncated` for a missing parameter,
    /// `outOfRange` for an init parameter other than 0 or 1. Start and Init Parameters without their byte are the
    /// DFU v1 requests.
    public init(decoding bytes: [UInt8]) throws(GATTCodecError) {
        var reader = ByteReader(bytes)
        let rawOpcode = try reader.readUInt8()
        guard let opcode = LegacyDFUOpcode(rawValue: rawOpcode) else {
            throw .unknownIdentifier(field: "opcode", value: Int(rawOpcode))
        }
        switch opcode {
        case .start:
            guard reader.remainingCount > 0 else {
                self = .startV1
                return
            }
            self = .start(LegacyDFUImageType(rawValue: try reader.readUInt8()))
        case .initParameters:
            guard reader.remainingCount > 0 else {
                self = .initParametersV1
                return
            }
            let value = try reader.readUInt8()
            guard value <= 1 else { throw .outOfRange(field: "init parameters", value: Int(value)) }
            self = .initParameters(complete: value == 1)
        case .receiveFirmware: self = .receiveFirmware
        case .validate: self = .validate
        case .activateAndReset: self = .activateAndReset
        case .reset: self = .reset
        case .reportReceivedImageSize: self = .reportReceivedImageSize
        case .packetReceiptNotificationRequest:
            self = .packetReceiptNotificationRequest(try reader.read(UInt16.self))
        }
    }
}

/// The 12 bytes written to the packet characteristic after Start: SoftDevice, bootloader and application sizes,
/// u32 little-endian each, 0 for an image not sent.
public struct LegacyDFUImageSizes: Equatable, Sendable {
    public var softDevice: UInt32
    public var bootloader: UInt32
    public var application: UInt32

    public init(softDevice: UInt32 = 0, bootloader: UInt32 = 0, application: UInt32 = 0) {
        self.softDevice = softDevice
        self.bootloader = bootloader
        self.application = application
    }

    public static let encodedCount = 12

    /// DFU v1's size packet after `startV1`: the application's size alone, u32 little-endian.
    public static func encodedV1(applicationSize: UInt32) -> [UInt8] {
        var writer = ByteWriter()
        writer.write(applicationSize)
        return writer.bytes
    }

    public var total: Int { Int(softDevice) + Int(bootloader) + Int(application) }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(softDevice)
        writer.write(bootloader)
        writer.write(application)
        return writer.bytes
    }

    public init(decoding bytes: [UInt8]) throws(GATTCodecError) {
        var reader = ByteReader(bytes)
        softDevice = try reader.read(UInt32.self)
        bootloader = try reader.read(UInt32.self)
        application = try reader.read(UInt32.self)
    }
}

/// A control point notification. The bootloader encodes these; the client decodes them.
public enum LegacyDFUNotification: Equatable, Sendable {
    /// `10 opcode status`; raw opcode because a bootloader answers opcodes it does not know, too.
    case response(requestOpcode: UInt8, status: LegacyDFUStatus)
    /// `10 07 01 size:u32`.
    case receivedImageSize(UInt32)
    /// `11 bytes:u32` — image bytes received so far.
    case packetReceipt(bytesReceived: UInt32)

    public func encoded() -> [UInt8] {
        var writer = ByteWriter()
        switch self {
        case .response(let opcode, let status):
            writer.write(LegacyDFUOpcode.responseCode)
            writer.write(opcode)
            writer.write(status.rawValue)
        case .receivedImageSize(let size):
            writer.write(LegacyDFUOpcode.responseCode)
            writer.write(LegacyDFUOpcode.reportReceivedImageSize.rawValue)
            writer.write(LegacyDFUStatus.success.rawValue)
            writer.write(size)
        case .packetReceipt(let bytes):
            writer.write(LegacyDFUOpcode.packetReceiptCode)
            writer.write(bytes)
        }
        return writer.bytes
    }

    public init(decoding bytes: [UInt8]) throws(GATTCodecError) {
        var reader = ByteReader(bytes)
        let code = try reader.readUInt8()
        switch code {
        case LegacyDFUOpcode.packetReceiptCode:
            self = .packetReceipt(bytesReceived: try reader.read(UInt32.self))
        case LegacyDFUOpcode.responseCode:
            let opcode = try reader.readUInt8()
            let status = LegacyDFUStatus(rawValue: try reader.readUInt8())
            if opcode == LegacyDFUOpcode.reportReceivedImageSize.rawValue, status == .success {
                self = .receivedImageSize(try reader.read(UInt32.self))
            } else {
                self = .response(requestOpcode: opcode, status: status)
            }
        default:
            throw .unknownIdentifier(field: "response code", value: Int(code))
        }
    }
}

/// The Legacy init packet (`.dat`, `dfu_init_packet_t` of SDK 7–11 with the CRC extension of
/// `dfu_init_template.c`): device type u16, device revision u16, application version u32, SoftDevice count u16,
/// that many SoftDevice ids u16, then the image's CRC-16/CCITT u16. All little-endian.
///
/// The SDK's template bootloader checks type, revision and SoftDevice list when the init packet completes, and
/// the CRC-16 when asked to validate the image.
public struct LegacyDFUInitPacket: Equatable, Sendable {
    /// Device type and revision 0xFFFF: the bootloader accepts the image whatever its own are.
    public static let anyDevice: UInt16 = 0xFFFF
    /// In the SoftDevice list: any SoftDevice will do.
    public static let anySoftDevice: UInt16 = 0xFFFE
    public static let anyApplicationVersion: UInt32 = 0xFFFF_FFFF

    public var deviceType: UInt16
    public var deviceRevision: UInt16
    public var applicationVersion: UInt32
    public var softDevices: [UInt16]
    public var imageCRC16: UInt16

    public init(deviceType: UInt16 = anyDevice, deviceRevision: UInt16 = anyDevice,
                applicationVersion: UInt32 = anyApplicationVersion, softDevices: [UInt16] = [anySoftDevice],
                imageCRC16: UInt16) {
        self.deviceType = deviceType
        self.deviceRevision = deviceRevision
        self.applicationVersion = applicationVersion
        self.softDevices = softDevices
        self.imageCRC16 = imageCRC16
    }

    /// An init packet accepting any device and SoftDevice, with `image`'s CRC-16.
    public init(for image: [UInt8], deviceType: UInt16 = anyDevice, deviceRevision: UInt16 = anyDevice,
                applicationVersion: UInt32 = anyApplicationVersion, softDevices: [UInt16] = [anySoftDevice]) {
        self.init(deviceType: deviceType, deviceRevision: deviceRevision, applicationVersion: applicationVersion,
                  softDevices: softDevices, imageCRC16: LegacyDFUImageCRC.checksum(image))
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(deviceType)
        writer.write(deviceRevision)
        writer.write(applicationVersion)
        writer.write(UInt16(truncatingIfNeeded: softDevices.count))
        for softDevice in softDevices { writer.write(softDevice) }
        writer.write(imageCRC16)
        return writer.bytes
    }

    /// Bytes after the CRC (padding, or a longer extension) are ignored, as the template does.
    public init(decoding bytes: [UInt8]) throws(GATTCodecError) {
        var reader = ByteReader(bytes)
        deviceType = try reader.read(UInt16.self)
        deviceRevision = try reader.read(UInt16.self)
        applicationVersion = try reader.read(UInt32.self)
        let count = try reader.read(UInt16.self)
        var softDevices: [UInt16] = []
        for _ in 0..<count { softDevices.append(try reader.read(UInt16.self)) }
        self.softDevices = softDevices
        imageCRC16 = try reader.read(UInt16.self)
    }
}

/// The image checksum of the Legacy init packet: the SDK's `crc16_compute` with no seed, which is
/// CRC-16/CCITT-FALSE (polynomial 0x1021, initial 0xFFFF, no reflection, no final XOR) — the same function as
/// `FrameCRC16`.
public enum LegacyDFUImageCRC {
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt16 { FrameCRC16.checksum(bytes) }
}

/// The version characteristic (0x1534): u16 little-endian, major in the high byte (`DFU_REVISION =
/// (DFU_REV_MAJOR << 8) | DFU_REV_MINOR`). Android-DFU-Library reads 0.5 (SDK 7) as "extended init packet
/// required", 0.6 as SDK 8, 0.8 as SDK 9–11.
public struct LegacyDFUVersion: Equatable, Sendable {
    public var major: UInt8
    public var minor: UInt8

    public init(major: UInt8, minor: UInt8) {
        self.major = major
        self.minor = minor
    }

    /// SDK 9 – 11.
    public static let sdk11 = LegacyDFUVersion(major: 0, minor: 8)

    public func encoded() -> [UInt8] { [minor, major] }

    public init(decoding bytes: [UInt8]) throws(GATTCodecError) {
        var reader = ByteReader(bytes)
        let value = try reader.read(UInt16.self)
        self.init(major: UInt8(value >> 8), minor: UInt8(value & 0xFF))
    }
}
