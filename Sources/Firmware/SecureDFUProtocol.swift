import CSystemZlib
import Wearables

// Nordic Secure DFU over BLE (nRF5 SDK 12+ bootloaders), as documented by NordicSemiconductor/Android-DFU-Library
// (`SecureDfuImpl.java`) and the nRF5 SDK (`nrf_dfu_req_handler.c`, `nrf_dfu_ble.c`, `nrf_dfu_handling_error.h`).
// Only the bytes live here; `SecureDFUClient` and `SecureDFUTarget` are the two state machines built on them.

/// The Secure DFU service and characteristics, in lower case as BlueZ reports UUIDs.
public enum SecureDFUUUID {
    /// The 16-bit SIG-assigned 0xFE59 on the Bluetooth Base UUID; both the bootloader and (with the buttonless
    /// characteristic) the application expose it.
    public static let service = "0000fe59-0000-1000-8000-00805f9b34fb"
    /// Requests (write with response) and their responses (notify).
    public static let controlPoint = "8ec90001-f315-4f60-9fb8-838830daea50"
    /// Object contents, written without response; the bootloader answers only through the control point.
    public static let packet = "8ec90002-f315-4f60-9fb8-838830daea50"
    /// The application's "buttonless without bonds" entry: write 0x01 and the device reboots into its bootloader.
    public static let buttonlessWithoutBonds = "8ec90003-f315-4f60-9fb8-838830daea50"
}

/// What an object holds: the init packet (`.dat`) is the one command object, the image (`.bin`) is cut into data
/// objects of at most the size Select reports.
public enum SecureDFUObjectType: UInt8, Sendable, CaseIterable {
    case command = 0x01
    case data = 0x02
}

/// The first byte of a control point write, and the second of its response.
public enum SecureDFUOpcode: UInt8, Sendable, CaseIterable {
    case create = 0x01
    case setPacketReceiptNotification = 0x02
    case calculateChecksum = 0x03
    case execute = 0x04
    case select = 0x06

    /// The first byte of every control point notification.
    public static let responseCode: UInt8 = 0x60
}

/// The third byte of a response (`nrf_dfu_result_t`).
///
/// A struct rather than an enum so that a code this file does not list still decodes and still reaches the user
/// with its number.
public struct SecureDFUResult: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let invalid = SecureDFUResult(rawValue: 0x00)
    public static let success = SecureDFUResult(rawValue: 0x01)
    public static let opcodeNotSupported = SecureDFUResult(rawValue: 0x02)
    public static let invalidParameter = SecureDFUResult(rawValue: 0x03)
    public static let insufficientResources = SecureDFUResult(rawValue: 0x04)
    public static let invalidObject = SecureDFUResult(rawValue: 0x05)
    public static let unsupportedType = SecureDFUResult(rawValue: 0x07)
    public static let operationNotPermitted = SecureDFUResult(rawValue: 0x08)
    public static let operationFailed = SecureDFUResult(rawValue: 0x0A)
    /// The real reason follows as a `SecureDFUExtendedError` in the response's fourth byte.
    public static let extendedError = SecureDFUResult(rawValue: 0x0B)

    /// The SDK's name (`NRF_DFU_RES_CODE_…`), `result N` for a code it does not list.
    public var sdkName: String {
        switch self {
        case .invalid: "INVALID"
        case .success: "SUCCESS"
        case .opcodeNotSupported: "OP_CODE_NOT_SUPPORTED"
        case .invalidParameter: "INVALID_PARAMETER"
        case .insufficientResources: "INSUFFICIENT_RESOURCES"
        case .invalidObject: "INVALID_OBJECT"
        case .unsupportedType: "UNSUPPORTED_TYPE"
        case .operationNotPermitted: "OPERATION_NOT_PERMITTED"
        case .operationFailed: "OPERATION_FAILED"
        case .extendedError: "EXT_ERROR"
        default: "result \(rawValue)"
        }
    }

    public var description: String { sdkName }
}

/// The fourth byte of a response whose result is `extendedError` (`nrf_dfu_ext_error_code_t`, nRF5 SDK 15
/// `nrf_dfu_handling_error.h`). Mostly the init packet's validation and the image's post-validation.
public struct SecureDFUExtendedError: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Set when no extended code was recorded: a bootloader bug, per the SDK.
    public static let noError = SecureDFUExtendedError(rawValue: 0x00)
    public static let invalidErrorCode = SecureDFUExtendedError(rawValue: 0x01)
    public static let wrongCommandFormat = SecureDFUExtendedError(rawValue: 0x02)
    /// The init packet parsed but asks for something this bootloader does not do.
    public static let unknownCommand = SecureDFUExtendedError(rawValue: 0x03)
    /// The init packet's update type is invalid or a field it needs is missing.
    public static let initCommandInvalid = SecureDFUExtendedError(rawValue: 0x04)
    /// The firmware version is lower than the installed one (downgrade protection).
    public static let firmwareVersionFailure = SecureDFUExtendedError(rawValue: 0x05)
    public static let hardwareVersionFailure = SecureDFUExtendedError(rawValue: 0x06)
    /// None of the init packet's required SoftDevice ids is the installed one.
    public static let softDeviceVersionFailure = SecureDFUExtendedError(rawValue: 0x07)
    public static let signatureMissing = SecureDFUExtendedError(rawValue: 0x08)
    public static let wrongHashType = SecureDFUExtendedError(rawValue: 0x09)
    /// The hash could not be computed.
    public static let hashFailed = SecureDFUExtendedError(rawValue: 0x0A)
    public static let wrongSignatureType = SecureDFUExtendedError(rawValue: 0x0B)
    /// The received image's hash is not the one in the init packet: what a corrupt image ends in.
    public static let verificationFailed = SecureDFUExtendedError(rawValue: 0x0C)
    public static let insufficientSpace = SecureDFUExtendedError(rawValue: 0x0D)

    /// The SDK's name (`NRF_DFU_EXT_ERROR_…`), `extended error N` for a code it does not list.
    public var sdkName: String {
        switch self {
        case .noError: "NO_ERROR"
        case .invalidErrorCode: "INVALID_ERROR_CODE"
        case .wrongCommandFormat: "WRONG_COMMAND_FORMAT"
        case .unknownCommand: "UNKNOWN_COMMAND"
        case .initCommandInvalid: "INIT_COMMAND_INVALID"
        case .firmwareVersionFailure: "FW_VERSION_FAILURE"
        case .hardwareVersionFailure: "HW_VERSION_FAILURE"
        case .softDeviceVersionFailure: "SD_VERSION_FAILURE"
        case .signatureMissing: "SIGNATURE_MISSING"
        case .wrongHashType: "WRONG_HASH_TYPE"
        case .hashFailed: "HASH_FAILED"
        case .wrongSignatureType: "WRONG_SIGNATURE_TYPE"
        case .verificationFailed: "VERIFICATION_FAILED"
        case .insufficientSpace: "INSUFFICIENT_SPACE"
        default: "extended error \(rawValue)"
        }
    }

    public var description: String { sdkName }
}

/// A control point write. The client encodes these; the simulated bootloader decodes them.
public enum SecureDFURequest: Equatable, Sendable {
    /// `01 type size:u32` — start (or restart) an object of `size` bytes.
    case create(SecureDFUObjectType, size: UInt32)
    /// `02 n:u16` — answer every `n`th packet write with a checksum notification; 0 turns that off.
    case setPacketReceiptNotification(UInt16)
    /// `03` — the offset and CRC-32 of everything received so far.
    case calculateChecksum
    /// `04` — commit the current object (for the last data object: validate and install the image).
    case execute
    /// `06 type` — the maximum object size, and the offset and CRC-32 already stored for that type.
    case select(SecureDFUObjectType)

    public var opcode: SecureDFUOpcode {
        switch self {
        case .create: .create
        case .setPacketReceiptNotification: .setPacketReceiptNotification
        case .calculateChecksum: .calculateChecksum
        case .execute: .execute
        case .select: .select
        }
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(opcode.rawValue)
        switch self {
        case .create(let type, let size):
            writer.write(type.rawValue)
            writer.write(size)
        case .setPacketReceiptNotification(let interval):
            writer.write(interval)
        case .calculateChecksum, .execute:
            break
        case .select(let type):
            writer.write(type.rawValue)
        }
        return writer.bytes
    }

    /// Throws `unknownIdentifier` for an opcode or object type outside the protocol (the bootloader answers those
    /// with `opcodeNotSupported` and `invalidObject`), `truncated` when a parameter is missing. Trailing bytes are
    /// ignored, as the SDK does.
    public init(decoding bytes: [UInt8]) throws(GATTCodecError) {
        var reader = ByteReader(bytes)
        let rawOpcode = try reader.readUInt8()
        guard let opcode = SecureDFUOpcode(rawValue: rawOpcode) else {
            throw .unknownIdentifier(field: "opcode", value: Int(rawOpcode))
        }
        switch opcode {
        case .create:
            let type = try Self.objectType(reader.readUInt8())
            self = .create(type, size: try reader.read(UInt32.self))
        case .setPacketReceiptNotification:
            self = .setPacketReceiptNotification(try reader.read(UInt16.self))
        case .calculateChecksum:
            self = .calculateChecksum
        case .execute:
            self = .execute
        case .select:
            self = .select(try Self.objectType(reader.readUInt8()))
        }
    }

    private static func objectType(_ raw: UInt8) throws(GATTCodecError) -> SecureDFUObjectType {
        guard let type = SecureDFUObjectType(rawValue: raw) else {
            throw .unknownIdentifier(field: "object type", value: Int(raw))
        }
        return type
    }
}

/// A control point notification: `60 opcode result [payload]`. The bootloader encodes these; the client decodes
/// them.
///
/// A packet receipt notification is a `checksum` response that nobody asked for: the bootloader sends it after
/// every n-th packet write, with the same bytes as the answer to Calculate Checksum.
public enum SecureDFUResponse: Equatable, Sendable {
    /// Success for a request without a payload: create, set PRN, execute.
    case success(SecureDFUOpcode)
    /// Success for Select: `max size:u32, offset:u32, CRC-32:u32`.
    case selected(maxSize: UInt32, offset: UInt32, crc: UInt32)
    /// Success for Calculate Checksum, and every packet receipt notification: `offset:u32, CRC-32:u32`.
    case checksum(offset: UInt32, crc: UInt32)
    /// Anything but success. `requestOpcode` is raw because a bootloader answers opcodes it does not know, too;
    /// `extendedError` is present exactly when `result` is `extendedError`.
    case failure(requestOpcode: UInt8, result: SecureDFUResult, extendedError: SecureDFUExtendedError?)

    /// The opcode this answers, raw.
    public var requestOpcode: UInt8 {
        switch self {
        case .success(let opcode): opcode.rawValue
        case .selected: SecureDFUOpcode.select.rawValue
        case .checksum: SecureDFUOpcode.calculateChecksum.rawValue
        case .failure(let opcode, _, _): opcode
        }
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(SecureDFUOpcode.responseCode)
        writer.write(requestOpcode)
        switch self {
        case .success:
            writer.write(SecureDFUResult.success.rawValue)
        case .selected(let maxSize, let offset, let crc):
            writer.write(SecureDFUResult.success.rawValue)
            writer.write(maxSize)
            writer.write(offset)
            writer.write(crc)
        case .checksum(let offset, let crc):
            writer.write(SecureDFUResult.success.rawValue)
            writer.write(offset)
            writer.write(crc)
        case .failure(_, let result, let extendedError):
            writer.write(result.rawValue)
            if result == .extendedError { writer.write((extendedError ?? .noError).rawValue) }
        }
        return writer.bytes
    }

    /// Throws `unknownIdentifier` when the first byte is not 0x60 or a success answers an opcode outside the
    /// protocol, `truncated` when a payload (or the extended code) is cut short.
    public init(decoding bytes: [UInt8]) throws(GATTCodecError) {
        var reader = ByteReader(bytes)
        let code = try reader.readUInt8()
        guard code == SecureDFUOpcode.responseCode else {
            throw .unknownIdentifier(field: "response code", value: Int(code))
        }
        let rawOpcode = try reader.readUInt8()
        let result = SecureDFUResult(rawValue: try reader.readUInt8())
        guard result == .success else {
            let extended = result == .extendedError ? SecureDFUExtendedError(rawValue: try reader.readUInt8()) : nil
            self = .failure(requestOpcode: rawOpcode, result: result, extendedError: extended)
            return
        }
        guard let opcode = SecureDFUOpcode(rawValue: rawOpcode) else {
            throw .unknownIdentifier(field: "opcode", value: Int(rawOpcode))
        }
        switch opcode {
        case .select:
            self = .selected(maxSize: try reader.read(UInt32.self), offset: try reader.read(UInt32.self),
                             crc: try reader.read(UInt32.self))
        case .calculateChecksum:
            self = .checksum(offset: try reader.read(UInt32.self), crc: try reader.read(UInt32.self))
        case .create, .setPacketReceiptNotification, .execute:
            self = .success(opcode)
        }
    }
}

/// The application-side buttonless characteristic (8EC90003, indicate + write): `01` asks the application to
/// reboot into its bootloader; it indicates `20 01 result` first.
public enum SecureDFUButtonless {
    public static let enterBootloaderOpcode: UInt8 = 0x01
    /// `02 length name` — the name the bootloader advertises with (only on devices that support it).
    public static let setAdvertisementNameOpcode: UInt8 = 0x02
    public static let responseCode: UInt8 = 0x20

    public static let enterBootloaderRequest: [UInt8] = [enterBootloaderOpcode]

    /// `ble_dfu_buttonless_rsp_code_t` of the nRF5 SDK.
    public struct Result: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let success = Result(rawValue: 0x01)
        public static let opcodeNotSupported = Result(rawValue: 0x02)
        public static let operationFailed = Result(rawValue: 0x04)
        public static let advertisementNameInvalid = Result(rawValue: 0x05)
        public static let busy = Result(rawValue: 0x06)
        /// The bonded variant refuses an unbonded peer.
        public static let notBonded = Result(rawValue: 0x07)

        public var description: String {
            switch self {
            case .success: "DFU_RSP_SUCCESS"
            case .opcodeNotSupported: "DFU_RSP_OP_CODE_NOT_SUPPORTED"
            case .operationFailed: "DFU_RSP_OPERATION_FAILED"
            case .advertisementNameInvalid: "DFU_RSP_ADV_NAME_INVALID"
            case .busy: "DFU_RSP_BUSY"
            case .notBonded: "DFU_RSP_NOT_BONDED"
            default: "result \(rawValue)"
            }
        }
    }

    public static func response(to opcode: UInt8, result: Result) -> [UInt8] {
        [responseCode, opcode, result.rawValue]
    }

    /// The result of an indication answering `opcode`; nil for anything else.
    public static func result(of indication: [UInt8], answering opcode: UInt8 = enterBootloaderOpcode) -> Result? {
        guard indication.count >= 3, indication[0] == responseCode, indication[1] == opcode else { return nil }
        return Result(rawValue: indication[2])
    }
}

/// Where to look for the bootloader after buttonless entry.
///
/// The unbonded bootloader (`NRF_DFU_BLE_REQUIRES_BONDS` = 0, which the 8EC90003 characteristic implies) changes
/// its GAP address before it advertises: nRF5 SDK `nrf_dfu_ble.c` `gap_address_change()` does `addr.addr[0] += 1`.
/// `addr[0]` is the least significant byte, i.e. the last one of `AA:BB:CC:DD:EE:FF`, and it is a `uint8_t`, so it
/// wraps (…:FF → …:00) without carrying into the next byte. Android-DFU-Library's `BootloaderScanner` documents the
/// same (`…:EE:45/FF → …:EE:46/00`) and scans for both the same address and the incremented one, because a bonded
/// bootloader, or one built without the change, keeps the application's address.
public enum SecureDFUBootloaderAddress {
    /// The address the bootloader advertises under, upper case as BlueZ writes addresses; nil if `address` is not
    /// `XX:XX:XX:XX:XX:XX`.
    public static func after(_ address: String) -> String? {
        let bytes = address.split(separator: ":", omittingEmptySubsequences: false).map { part in
            part.count == 2 ? UInt8(part, radix: 16) : nil
        }
        guard bytes.count == 6, case let known = bytes.compactMap({ $0 }), known.count == 6 else { return nil }
        return (known.dropLast() + [known[5] &+ 1])
            .map { byte in (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true) }
            .joined(separator: ":")
    }
}

/// How much of an image the bootloader has confirmed, for percent and remaining time; the init packet does not
/// count.
public struct DFUTransferProgress: Equatable, Sendable {
    public var acknowledgedBytes: Int
    public var totalBytes: Int

    public init(acknowledgedBytes: Int, totalBytes: Int) {
        self.acknowledgedBytes = acknowledgedBytes
        self.totalBytes = totalBytes
    }

    /// 0…1; 1 for an empty image.
    public var fraction: Double {
        totalBytes == 0 ? 1 : Double(acknowledgedBytes) / Double(totalBytes)
    }
}

/// zlib's CRC-32 (reflected 0xEDB88320, as the nRF5 SDK's `crc32_compute` and zip), incremental: the CRC of `a + b` is
/// `update(update(initial, a), b)`.
enum DFUChecksum {
    static let initial: UInt32 = 0

    static func update(_ crc: UInt32, with bytes: some Collection<UInt8>) -> UInt32 {
        guard !bytes.isEmpty else { return crc }
        let contiguous = bytes.withContiguousStorageIfAvailable { UInt32(CSystemZlib.crc32(UInt(crc), $0.baseAddress, UInt32($0.count))) }
        return contiguous ?? update(crc, with: Array(bytes))
    }

    static func crc32(_ bytes: some Collection<UInt8>) -> UInt32 { update(initial, with: bytes) }
}
