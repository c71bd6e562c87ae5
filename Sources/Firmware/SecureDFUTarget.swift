import Wearables

/// What the bootloader makes of an init packet when the command object is executed. The simulator wires real
/// init-packet parsing in; the target only knows the answer.
public struct DFUInitCheck: Sendable {
    public enum Outcome: Sendable {
        /// The image that follows must be `imageSize` bytes, and `verify` must accept it (the hash or signature
        /// check a real bootloader runs after the last data object).
        case accepted(imageSize: Int, verify: @Sendable ([UInt8]) -> Bool)
        case rejected(SecureDFUResult, extended: SecureDFUExtendedError?)
    }

    public let outcome: Outcome

    public static func accepted(imageSize: Int, verify: @escaping @Sendable ([UInt8]) -> Bool) -> DFUInitCheck {
        DFUInitCheck(outcome: .accepted(imageSize: imageSize, verify: verify))
    }

    /// Use `.extendedError` with the extended code, as the SDK does for every validation failure (for example
    /// `initCommandInvalid`, `firmwareVersionFailure`, `softDeviceVersionFailure`).
    public static func rejected(_ result: SecureDFUResult, extended: SecureDFUExtendedError? = nil) -> DFUInitCheck {
        DFUInitCheck(outcome: .rejected(result, extended: extended))
    }

    /// `.rejected(.extendedError, extended: code)`.
    public static func rejected(_ extended: SecureDFUExtendedError) -> DFUInitCheck {
        rejected(.extendedError, extended: extended)
    }
}

/// What the simulated bootloader does in answer to a write.
public enum SecureDFUTargetOutput: Equatable, Sendable {
    /// Notify these bytes on the control point.
    case notify([UInt8])
    /// The image received so far crossed a mark set with `addProgressMark(_:)` (for injecting a link drop).
    case passedProgressMark(Double)
    /// The image was verified and installed: the device resets into it and the link drops.
    case reset
}

/// The bootloader's side of Secure DFU, as a value: control point and packet writes in, notifications out. For the
/// simulator, which owns the GATT service and the link.
///
/// It follows the nRF5 SDK 15 request handler (`nrf_dfu_req_handler.c`, `nrf_dfu_validation.c`,
/// `nrf_dfu_ble.c`), checks included:
/// - Creating the command object resets all progress (command and data); its size must be 1…max
///   (`insufficientResources` above max, `invalidParameter` for 0).
/// - A data object needs an executed init packet (`operationNotPermitted`), a size of 1…max
///   (`insufficientResources` above), page-aligned unless it is the image's last (`invalidParameter`), and must
///   fit in the image size the init packet announced (`operationNotPermitted`). Creating it rewinds to the end of
///   the last executed data object, so a client can send an object again.
/// - A packet beyond the current object's size is dropped (`invalidParameter`). Like the SDK, a packet write is
///   answered only when a receipt notification is due, so such an error shows in the next receipt — or in the
///   checksum the client asks for, which will not match.
/// - Executing an object that has not received its full size is `operationNotPermitted`. Executing the last data
///   object runs the init check's `verify` on the whole image: success installs it (`installedImage`, then
///   `.reset`), failure answers `extendedError` + `verificationFailed` (0x0C), the SDK's code for an image whose
///   hash does not match the init packet.
///
/// State survives a link drop (there is nothing to call): the SDK keeps its progress in the settings page, and
/// even without `NRF_DFU_SAVE_PROGRESS_IN_FLASH` the RAM copy lives until the bootloader resets, which a
/// disconnect does not cause. Select then reports the offset and CRC-32 a reconnecting client resumes from.
/// The receipt interval survives too; clients set it again anyway.
public struct SecureDFUTarget: Sendable {
    public struct Configuration: Sendable {
        /// `INIT_COMMAND_MAX_SIZE`: 512 since SDK 15 (256 before).
        public var maxCommandObjectSize = 512
        /// `DATA_OBJECT_MAX_SIZE`: one flash page.
        public var maxDataObjectSize = 4096
        /// `CODE_PAGE_SIZE` on nRF52; data objects other than the last must be a multiple of it.
        public var flashPageSize = 4096

        public init() {}
    }

    public let configuration: Configuration
    private let checkInitPacket: @Sendable ([UInt8]) -> DFUInitCheck

    /// The type the last Select or Create named; Execute, Calculate Checksum and packet writes apply to it.
    private var currentObject = SecureDFUObjectType.command

    private var commandSize = 0
    private var command: [UInt8] = []
    private var commandCRC = DFUChecksum.initial
    private var acceptedInit: (imageSize: Int, verify: @Sendable ([UInt8]) -> Bool)?

    /// Everything received of the image (its count is the SDK's `firmware_image_offset`), and its CRC-32.
    private var image: [UInt8] = []
    private var imageCRC = DFUChecksum.initial
    /// The end of the last executed data object, and the CRC-32 up to there.
    private var executedOffset = 0
    private var executedCRC = DFUChecksum.initial
    /// The created data object's size; 0 when none is open.
    private var dataObjectSize = 0

    private var packetReceiptInterval: UInt16 = 0
    private var packetsUntilReceipt: UInt16 = 0

    private var pendingRejection: (result: SecureDFUResult, extended: SecureDFUExtendedError?)?
    /// The answer the Execute that completes the image gives once, instead of executing.
    private var pendingFinalExecuteAnswer: SecureDFUResult?
    /// Data objects still to be received with their first byte flipped, and whether the open one is.
    private var objectsToCorrupt = 0
    private var corruptingObject = false
    private var progressMarks: [Double] = []

    /// The image the last successful transfer installed.
    public private(set) var installedImage: [UInt8]?

    public init(configuration: Configuration = Configuration(),
                checkInitPacket: @escaping @Sendable ([UInt8]) -> DFUInitCheck) {
        self.configuration = configuration
        self.checkInitPacket = checkInitPacket
    }

    /// Received bytes of the image over the size the accepted init packet announced; 0 before one was accepted.
    public var progress: Double {
        guard let size = acceptedInit?.imageSize, size > 0 else { return 0 }
        return Double(image.count) / Double(size)
    }

    /// Bytes of the image received so far (whether or not their object was executed).
    public var receivedImageBytes: Int { image.count }

    // MARK: Fault injection

    /// The next Execute (of either object type) answers `result` instead of executing.
    public mutating func rejectNextObject(result: SecureDFUResult, extended: SecureDFUExtendedError? = nil) {
        pendingRejection = (result, result == .extendedError ? extended ?? .noError : nil)
    }

    /// Report `.passedProgressMark(fraction)` once, from the packet write that takes `progress` to `fraction` or
    /// beyond.
    public mutating func addProgressMark(_ fraction: Double) {
        progressMarks.append(fraction)
        progressMarks.sort()
    }

    /// The Execute of the data object that completes the image answers `result` once and executes nothing, as a
    /// bootloader does whose SoftDevice is still busy erasing (`INVALID_OBJECT`); the same Execute again succeeds.
    public mutating func answerFinalExecuteOnce(_ result: SecureDFUResult) {
        pendingFinalExecuteAnswer = result
    }

    /// Whether `answerFinalExecuteOnce` has yet to answer.
    public var finalExecuteAnswerPending: Bool { pendingFinalExecuteAnswer != nil }

    /// Data objects `corruptNextDataObjects` has yet to damage.
    public var dataObjectsStillToCorrupt: Int { objectsToCorrupt }

    /// The next `count` data objects created (a re-created one counts again) are received with their first byte
    /// flipped, as if a packet had been damaged on the way: their checksum disagrees with what was sent.
    public mutating func corruptNextDataObjects(_ count: Int) {
        objectsToCorrupt = max(0, count)
    }

    // MARK: Writes

    public mutating func writeControlPoint(_ value: [UInt8]) -> [SecureDFUTargetOutput] {
        let request: SecureDFURequest
        do {
            request = try SecureDFURequest(decoding: value)
        } catch {
            let opcode = value.first ?? 0
            let result: SecureDFUResult = switch error {
            case .unknownIdentifier(field: "opcode", _): .opcodeNotSupported
            case .unknownIdentifier: .invalidObject
            default: .invalidParameter
            }
            return [.notify(failure(opcode, result))]
        }
        switch request {
        case .setPacketReceiptNotification(let interval):
            packetReceiptInterval = interval
            packetsUntilReceipt = interval
            return [.notify(SecureDFUResponse.success(.setPacketReceiptNotification).encoded())]
        case .select(let type):
            currentObject = type
            return [.notify(select(type).encoded())]
        case .create(let type, let size):
            currentObject = type
            packetsUntilReceipt = packetReceiptInterval
            let response = type == .command ? createCommand(size: Int(size)) : createData(size: Int(size))
            return [.notify(response.encoded())]
        case .calculateChecksum:
            return [.notify(checksum().encoded())]
        case .execute:
            if let rejection = pendingRejection {
                pendingRejection = nil
                return [.notify(SecureDFUResponse.failure(requestOpcode: SecureDFUOpcode.execute.rawValue,
                                                          result: rejection.result,
                                                          extendedError: rejection.extended).encoded())]
            }
            return currentObject == .command ? executeCommand() : executeData()
        }
    }

    public mutating func writePacket(_ value: [UInt8]) -> [SecureDFUTargetOutput] {
        let result = currentObject == .command ? appendCommand(value) : appendData(value)
        var outputs: [SecureDFUTargetOutput] = []
        while let mark = progressMarks.first, acceptedInit != nil, progress >= mark {
            progressMarks.removeFirst()
            outputs.append(.passedProgressMark(mark))
        }
        // nrf_dfu_ble.c: every write counts towards the receipt; only a due receipt is sent, carrying the write's
        // result, or on success the offset and CRC-32 of the current object type.
        guard packetReceiptInterval > 0 else { return outputs }
        packetsUntilReceipt &-= 1
        guard packetsUntilReceipt == 0 else { return outputs }
        packetsUntilReceipt = packetReceiptInterval
        let receipt = result == .success
            ? checksum() : .failure(requestOpcode: SecureDFUOpcode.calculateChecksum.rawValue, result: result,
                                    extendedError: nil)
        return outputs + [.notify(receipt.encoded())]
    }

    // MARK: Command object

    private func select(_ type: SecureDFUObjectType) -> SecureDFUResponse {
        switch type {
        case .command:
            .selected(maxSize: UInt32(configuration.maxCommandObjectSize), offset: UInt32(command.count),
                      crc: commandCRC)
        case .data:
            .selected(maxSize: UInt32(configuration.maxDataObjectSize), offset: UInt32(image.count), crc: imageCRC)
        }
    }

    private func checksum() -> SecureDFUResponse {
        switch currentObject {
        case .command: .checksum(offset: UInt32(command.count), crc: commandCRC)
        case .data: .checksum(offset: UInt32(image.count), crc: imageCRC)
        }
    }

    private mutating func createCommand(size: Int) -> SecureDFUResponse {
        guard size > 0 else { return .failure(requestOpcode: SecureDFUOpcode.create.rawValue, result: .invalidParameter, extendedError: nil) }
        guard size <= configuration.maxCommandObjectSize else {
            return .failure(requestOpcode: SecureDFUOpcode.create.rawValue, result: .insufficientResources, extendedError: nil)
        }
        commandSize = size
        command = []
        commandCRC = DFUChecksum.initial
        acceptedInit = nil
        image = []
        imageCRC = DFUChecksum.initial
        executedOffset = 0
        executedCRC = DFUChecksum.initial
        dataObjectSize = 0
        return .success(.create)
    }

    private mutating func appendCommand(_ bytes: [UInt8]) -> SecureDFUResult {
        guard command.count + bytes.count <= commandSize else { return .invalidParameter }
        command += bytes
        commandCRC = DFUChecksum.update(commandCRC, with: bytes)
        return .success
    }

    private mutating func executeCommand() -> [SecureDFUTargetOutput] {
        guard commandSize > 0, command.count == commandSize else {
            return [.notify(failure(SecureDFUOpcode.execute.rawValue, .operationNotPermitted))]
        }
        // The SDK answers success for an init packet it already accepted; the data progress stays.
        guard acceptedInit == nil else { return [.notify(SecureDFUResponse.success(.execute).encoded())] }
        switch checkInitPacket(command).outcome {
        case .accepted(let imageSize, let verify):
            guard imageSize > 0 else {
                return [.notify(SecureDFUResponse.failure(requestOpcode: SecureDFUOpcode.execute.rawValue,
                                                          result: .extendedError,
                                                          extendedError: .initCommandInvalid).encoded())]
            }
            acceptedInit = (imageSize, verify)
            return [.notify(SecureDFUResponse.success(.execute).encoded())]
        case .rejected(let result, let extended):
            return [.notify(SecureDFUResponse.failure(requestOpcode: SecureDFUOpcode.execute.rawValue, result: result,
                                                      extendedError: extended).encoded())]
        }
    }

    // MARK: Data objects

    private mutating func createData(size: Int) -> SecureDFUResponse {
        func refuse(_ result: SecureDFUResult) -> SecureDFUResponse {
            .failure(requestOpcode: SecureDFUOpcode.create.rawValue, result: result, extendedError: nil)
        }
        guard let imageSize = acceptedInit?.imageSize else { return refuse(.operationNotPermitted) }
        guard size > 0 else { return refuse(.invalidParameter) }
        guard size % configuration.flashPageSize == 0 || executedOffset + size == imageSize else {
            return refuse(.invalidParameter)
        }
        guard size <= configuration.maxDataObjectSize else { return refuse(.insufficientResources) }
        guard executedOffset + size <= imageSize else { return refuse(.operationNotPermitted) }
        dataObjectSize = size
        image.removeSubrange(executedOffset...)
        imageCRC = executedCRC
        corruptingObject = objectsToCorrupt > 0
        if corruptingObject { objectsToCorrupt -= 1 }
        return .success(.create)
    }

    private mutating func appendData(_ bytes: [UInt8]) -> SecureDFUResult {
        guard acceptedInit != nil else { return .operationNotPermitted }
        guard image.count - executedOffset + bytes.count <= dataObjectSize else { return .invalidParameter }
        var received = bytes
        if corruptingObject, image.count == executedOffset, !received.isEmpty { received[0] ^= 0xFF }
        image += received
        imageCRC = DFUChecksum.update(imageCRC, with: received)
        return .success
    }

    private mutating func executeData() -> [SecureDFUTargetOutput] {
        guard let accepted = acceptedInit, image.count - executedOffset == dataObjectSize else {
            return [.notify(failure(SecureDFUOpcode.execute.rawValue, .operationNotPermitted))]
        }
        if image.count == accepted.imageSize, let answer = pendingFinalExecuteAnswer {
            pendingFinalExecuteAnswer = nil
            return [.notify(failure(SecureDFUOpcode.execute.rawValue, answer))]
        }
        dataObjectSize = 0
        executedOffset = image.count
        executedCRC = imageCRC
        guard image.count == accepted.imageSize else {
            return [.notify(SecureDFUResponse.success(.execute).encoded())]
        }
        guard accepted.verify(image) else {
            return [.notify(SecureDFUResponse.failure(requestOpcode: SecureDFUOpcode.execute.rawValue,
                                                      result: .extendedError,
                                                      extendedError: .verificationFailed).encoded())]
        }
        installedImage = image
        return [.notify(SecureDFUResponse.success(.execute).encoded()), .reset]
    }

    private func failure(_ opcode: UInt8, _ result: SecureDFUResult) -> [UInt8] {
        SecureDFUResponse.failure(requestOpcode: opcode, result: result, extendedError: nil).encoded()
    }
}
