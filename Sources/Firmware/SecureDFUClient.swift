import Wearables

/// Why a Secure DFU transfer stopped. Every case ends up as the MQTT contract's `DFU_FAILED`.
public enum SecureDFUError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bootloader refused a request; `extended` is present when `result` is `extendedError`.
    case remote(SecureDFUResult, extended: SecureDFUExtendedError?)
    /// An object's checksum still disagreed after its last attempt.
    case checksumMismatch(SecureDFUObjectType, expectedOffset: Int, expectedCRC: UInt32,
                          reportedOffset: Int, reportedCRC: UInt32)
    /// A notification that is no Secure DFU response at all.
    case malformedNotification([UInt8])
    /// A well-formed response to a request we did not make (or not now).
    case unexpectedResponse(expecting: SecureDFUOpcode, notification: [UInt8])
    /// Nothing to send: the init packet or the image is empty.
    case emptyInput(String)

    /// `DFU_FAILED`, with the bootloader's code as `vendorCode` when it gave one: the result code itself, or
    /// `0x0B00 + extended code` for an extended error (so 0x0B0C is a failed image verification), which keeps the
    /// two tables apart.
    public var commandError: CommandError {
        switch self {
        case .remote(let result, let extended):
            let vendorCode = result == .extendedError
                ? 0x0B00 + Int((extended ?? .noError).rawValue) : Int(result.rawValue)
            return CommandError(.dfuFailed, description, vendorCode: vendorCode)
        default:
            return CommandError(.dfuFailed, description)
        }
    }

    public var description: String {
        switch self {
        case .remote(let result, let extended):
            if let extended { "bootloader answered \(result) (\(extended))" } else { "bootloader answered \(result)" }
        case .checksumMismatch(let type, let expectedOffset, let expectedCRC, let reportedOffset, let reportedCRC):
            "\(type) object checksum mismatch: sent \(expectedOffset) bytes with CRC-32 \(hex(expectedCRC)), "
                + "bootloader has \(reportedOffset) bytes with \(hex(reportedCRC))"
        case .malformedNotification(let bytes):
            "malformed control point notification \(bytes)"
        case .unexpectedResponse(let expecting, let bytes):
            "expected the answer to \(expecting), got \(bytes)"
        case .emptyInput(let what):
            "nothing to send: \(what) is empty"
        }
    }
}

private func hex(_ value: UInt32) -> String { "0x" + String(value, radix: 16, uppercase: true) }

/// The DFU controller's side of Secure DFU, as a value: it turns control point notifications into the writes to
/// make next. It knows nothing of BlueZ, time or retries across connections; the driver performs the actions in
/// order, feeds every control point notification back, and owns timeouts.
///
/// The flow is Android-DFU-Library's `SecureDfuImpl`:
/// 1. Select the command object. If the bootloader already holds a prefix of this init packet (offset and CRC-32
///    match), send only the rest; if it holds all of it, skip straight to Execute (executing twice is harmless:
///    the SDK answers success for an init packet it already accepted). Otherwise disable packet receipts, create
///    the command object, send the init packet, check its CRC-32, execute.
/// 2. Enable packet receipt notifications, select the data object, then per object of at most the reported max
///    size: create, stream packets (after every n-th packet wait for the receipt and check its offset and
///    CRC-32), calculate the checksum, compare, execute.
///
/// Resuming after a link drop needs nothing but a new client on the new connection: Select reports what the
/// bootloader kept. The data rule is Nordic's: when the CRC-32 of our first `offset` bytes matches, continue from
/// `offset` — inside a partly sent object *without* creating it again (Create would rewind it), and at an object
/// boundary by executing that object (it may not have been executed; a bootloader that already did answers
/// success, or `operationNotPermitted` in SDK 15–17, which is tolerated). When the CRC disagrees, the object that
/// `offset` falls in (the previous one if `offset` is on a boundary) is sent again from its start; executed objects
/// before it are trusted.
///
/// A checksum mismatch (at a receipt or after the object) re-creates the object; each object gets three attempts,
/// counted afresh for the next one, as `SecureDfuImpl` counts them (`MAX_ATTEMPTS = 3`, reset after each executed
/// object; the command object likewise). The Execute of the last data object — where the bootloader erases and
/// writes the whole image, and where the SoftDevice may still be busy — is sent once more when it is answered
/// `INVALID_OBJECT` (`SecureDfuImpl.writeExecute(allowRetry:)`). Any other result than success fails with
/// `SecureDFUError.remote`.
public struct SecureDFUClient: Sendable {
    public typealias Action = DFUClientAction<SecureDFUError>

    public enum Event: Equatable, Sendable {
        case notification([UInt8])
    }

    /// Android-DFU-Library's default receipt interval for Secure DFU.
    public static let defaultPacketReceiptInterval: UInt16 = 12
    /// The payload of one write without response at the default ATT MTU of 23.
    public static let defaultPacketSize = 20

    /// One write's payload for a negotiated ATT MTU (3 bytes go to the ATT header).
    public static func packetSize(forATTMTU mtu: Int) -> Int { max(defaultPacketSize, mtu - 3) }

    public let initPacket: [UInt8]
    public let firmware: [UInt8]
    public let packetReceiptInterval: UInt16
    public let packetSize: Int

    /// How often an object is sent before a checksum mismatch fails the transfer (Android-DFU-Library's
    /// `SecureDfuImpl.MAX_ATTEMPTS`).
    public static let attemptsPerObject = 3

    private enum Phase: Equatable {
        case notStarted
        case selectingCommand
        case disablingReceipts(resumeAt: Int?)
        case creatingCommand
        case checkingCommand
        case executingCommand
        case enablingReceipts
        case selectingData
        case executingResumedObject
        case creatingData
        case awaitingReceipt
        case checkingData
        case executingData
        case done
    }

    private var phase = Phase.notStarted
    private let initPacketCRC: UInt32
    private var commandAttempt = 1

    private var maxObjectSize = 0
    /// The current data object is `firmware[objectStart..<objectEnd]`.
    private var objectStart = 0
    private var objectEnd = 0
    private var objectStartCRC = DFUChecksum.initial
    private var objectAttempt = 1
    /// What has been written of the image, and its CRC-32.
    private var sentOffset = 0
    private var sentCRC = DFUChecksum.initial
    private var packetsSinceReceipt = 0
    private var acknowledgedBytes = 0
    /// The last object's Execute was answered `INVALID_OBJECT` once and sent again.
    private var finalExecuteRepeated = false

    /// - Parameters:
    ///   - packetReceiptInterval: packets between receipt notifications during data objects; 0 turns them off
    ///     (the init packet is always sent without them, as Nordic's library does).
    ///   - packetSize: bytes per packet write, see `packetSize(forATTMTU:)`.
    public init(initPacket: [UInt8], firmware: [UInt8],
                packetReceiptInterval: UInt16 = defaultPacketReceiptInterval,
                packetSize: Int = defaultPacketSize) {
        self.initPacket = initPacket
        self.firmware = firmware
        self.packetReceiptInterval = packetReceiptInterval
        self.packetSize = max(1, packetSize)
        initPacketCRC = DFUChecksum.crc32(initPacket)
    }

    /// Bytes of the image the bootloader has confirmed (by receipt, checksum or Select), of the whole image.
    public var progress: DFUTransferProgress {
        DFUTransferProgress(acknowledgedBytes: acknowledgedBytes, totalBytes: firmware.count)
    }

    /// The first actions; call once, when notifications on the control point are enabled.
    public mutating func start() -> [Action] {
        guard phase == .notStarted else { return [] }
        guard !initPacket.isEmpty else { return fail(.emptyInput("the init packet")) }
        guard !firmware.isEmpty else { return fail(.emptyInput("the image")) }
        return request(.select(.command), then: .selectingCommand)
    }

    public mutating func handle(_ event: Event) -> [Action] {
        guard case .notification(let bytes) = event else { return [] }
        guard phase != .notStarted, phase != .done else { return [] }
        let response: SecureDFUResponse
        do { response = try SecureDFUResponse(decoding: bytes) } catch { return fail(.malformedNotification(bytes)) }

        switch phase {
        case .notStarted, .done:
            return []
        case .selectingCommand:
            guard case .selected(_, let offset, let crc) = response else { return unexpected(.select, response, bytes) }
            return commandSelected(offset: Int(offset), crc: crc)
        case .disablingReceipts(let resumeAt):
            guard response == .success(.setPacketReceiptNotification) else {
                return unexpected(.setPacketReceiptNotification, response, bytes)
            }
            if let resumeAt { return sendInitPacket(from: resumeAt) }
            return request(.create(.command, size: UInt32(initPacket.count)), then: .creatingCommand)
        case .creatingCommand:
            guard response == .success(.create) else { return unexpected(.create, response, bytes) }
            return sendInitPacket(from: 0)
        case .checkingCommand:
            guard case .checksum(let offset, let crc) = response else {
                return unexpected(.calculateChecksum, response, bytes)
            }
            return commandChecked(offset: Int(offset), crc: crc)
        case .executingCommand:
            guard response == .success(.execute) else { return unexpected(.execute, response, bytes) }
            packetsSinceReceipt = 0
            return request(.setPacketReceiptNotification(packetReceiptInterval), then: .enablingReceipts)
        case .enablingReceipts:
            guard response == .success(.setPacketReceiptNotification) else {
                return unexpected(.setPacketReceiptNotification, response, bytes)
            }
            return request(.select(.data), then: .selectingData)
        case .selectingData:
            guard case .selected(let maxSize, let offset, let crc) = response else {
                return unexpected(.select, response, bytes)
            }
            // A zero maximum would never let an object be created.
            guard maxSize > 0 else { return fail(.malformedNotification(bytes)) }
            return dataSelected(maxSize: Int(maxSize), offset: Int(offset), crc: crc)
        case .executingResumedObject:
            let alreadyExecuted = response == .failure(requestOpcode: SecureDFUOpcode.execute.rawValue,
                                                       result: .operationNotPermitted, extendedError: nil)
            if let repeated = repeatFinalExecute(after: response, then: .executingResumedObject) { return repeated }
            guard response == .success(.execute) || alreadyExecuted else {
                return unexpected(.execute, response, bytes)
            }
            return nextObjectOrFinish()
        case .creatingData:
            guard response == .success(.create) else { return unexpected(.create, response, bytes) }
            packetsSinceReceipt = 0
            return streamObject()
        case .awaitingReceipt:
            guard case .checksum(let offset, let crc) = response else {
                return unexpected(.calculateChecksum, response, bytes)
            }
            guard Int(offset) == sentOffset, crc == sentCRC else {
                return dataObjectMismatch(reportedOffset: Int(offset), reportedCRC: crc)
            }
            acknowledgedBytes = sentOffset
            return streamObject()
        case .checkingData:
            guard case .checksum(let offset, let crc) = response else {
                return unexpected(.calculateChecksum, response, bytes)
            }
            guard Int(offset) == objectEnd, crc == sentCRC else {
                return dataObjectMismatch(reportedOffset: Int(offset), reportedCRC: crc)
            }
            acknowledgedBytes = objectEnd
            return request(.execute, then: .executingData)
        case .executingData:
            if let repeated = repeatFinalExecute(after: response, then: .executingData) { return repeated }
            guard response == .success(.execute) else { return unexpected(.execute, response, bytes) }
            return nextObjectOrFinish()
        }
    }

    /// Execute once more when the last data object's Execute was answered `INVALID_OBJECT`: the bootloader could not
    /// erase or write yet (Android-DFU-Library: "SD busy? Retrying..."). Nil when that is not the case.
    private mutating func repeatFinalExecute(after response: SecureDFUResponse, then next: Phase) -> [Action]? {
        let invalidObject = SecureDFUResponse.failure(requestOpcode: SecureDFUOpcode.execute.rawValue,
                                                      result: .invalidObject, extendedError: nil)
        guard response == invalidObject, objectEnd == firmware.count, !finalExecuteRepeated else { return nil }
        finalExecuteRepeated = true
        return request(.execute, then: next)
    }

    // MARK: Command object

    private mutating func commandSelected(offset: Int, crc: UInt32) -> [Action] {
        if offset > 0, offset <= initPacket.count, crc == DFUChecksum.crc32(initPacket.prefix(offset)) {
            if offset == initPacket.count { return request(.execute, then: .executingCommand) }
            return request(.setPacketReceiptNotification(0), then: .disablingReceipts(resumeAt: offset))
        }
        return request(.setPacketReceiptNotification(0), then: .disablingReceipts(resumeAt: nil))
    }

    private mutating func sendInitPacket(from offset: Int) -> [Action] {
        var actions = stride(from: offset, to: initPacket.count, by: packetSize).map { start in
            Action.writePacket(Array(initPacket[start..<min(start + packetSize, initPacket.count)]))
        }
        actions += request(.calculateChecksum, then: .checkingCommand)
        return actions
    }

    private mutating func commandChecked(offset: Int, crc: UInt32) -> [Action] {
        guard offset == initPacket.count, crc == initPacketCRC else {
            guard commandAttempt < Self.attemptsPerObject else {
                return fail(.checksumMismatch(.command, expectedOffset: initPacket.count, expectedCRC: initPacketCRC,
                                              reportedOffset: offset, reportedCRC: crc))
            }
            commandAttempt += 1
            return request(.create(.command, size: UInt32(initPacket.count)), then: .creatingCommand)
        }
        return request(.execute, then: .executingCommand)
    }

    // MARK: Data objects

    private mutating func dataSelected(maxSize: Int, offset: Int, crc: UInt32) -> [Action] {
        maxObjectSize = maxSize
        guard offset > 0 else { return createObject(at: 0, crc: DFUChecksum.initial) }

        // The object `offset` falls in; on a boundary, the one that ends there (it may not have been executed).
        let isOnBoundary = offset % maxSize == 0
        let currentStart = isOnBoundary ? offset - maxSize : offset - offset % maxSize
        guard offset <= firmware.count, crc == DFUChecksum.crc32(firmware.prefix(offset)) else {
            let restart = min(currentStart, (firmware.count - 1) / maxSize * maxSize)
            return createObject(at: restart, crc: DFUChecksum.crc32(firmware.prefix(restart)))
        }
        acknowledgedBytes = offset
        objectStart = currentStart
        objectEnd = min(currentStart + maxSize, firmware.count)
        objectStartCRC = DFUChecksum.crc32(firmware.prefix(currentStart))
        objectAttempt = 1
        sentOffset = offset
        sentCRC = crc
        if offset == objectEnd { return request(.execute, then: .executingResumedObject) }
        return streamObject()
    }

    private mutating func createObject(at start: Int, crc: UInt32) -> [Action] {
        objectStart = start
        objectEnd = min(start + maxObjectSize, firmware.count)
        objectStartCRC = crc
        objectAttempt = 1
        return recreateObject()
    }

    /// Create (again) the current object; the bootloader rewinds to its start.
    private mutating func recreateObject() -> [Action] {
        sentOffset = objectStart
        sentCRC = objectStartCRC
        acknowledgedBytes = min(acknowledgedBytes, objectStart)
        return request(.create(.data, size: UInt32(objectEnd - objectStart)), then: .creatingData)
    }

    /// Packets up to the next receipt or the object's end, then the wait for that receipt or the checksum request.
    private mutating func streamObject() -> [Action] {
        var actions: [Action] = []
        while sentOffset < objectEnd {
            let end = min(sentOffset + packetSize, objectEnd)
            let packet = firmware[sentOffset..<end]
            actions.append(.writePacket(Array(packet)))
            sentCRC = DFUChecksum.update(sentCRC, with: packet)
            sentOffset = end
            if packetReceiptInterval > 0 {
                packetsSinceReceipt += 1
                if packetsSinceReceipt == Int(packetReceiptInterval) {
                    packetsSinceReceipt = 0
                    phase = .awaitingReceipt
                    return actions + [.waitForNotification]
                }
            }
        }
        return actions + request(.calculateChecksum, then: .checkingData)
    }

    private mutating func dataObjectMismatch(reportedOffset: Int, reportedCRC: UInt32) -> [Action] {
        guard objectAttempt < Self.attemptsPerObject else {
            return fail(.checksumMismatch(.data, expectedOffset: sentOffset, expectedCRC: sentCRC,
                                          reportedOffset: reportedOffset, reportedCRC: reportedCRC))
        }
        objectAttempt += 1
        return recreateObject()
    }

    private mutating func nextObjectOrFinish() -> [Action] {
        acknowledgedBytes = objectEnd
        guard objectEnd < firmware.count else {
            phase = .done
            return [.finished]
        }
        return createObject(at: objectEnd, crc: sentCRC)
    }

    // MARK: Helpers

    private mutating func request(_ request: SecureDFURequest, then next: Phase) -> [Action] {
        phase = next
        return [.writeControl(request.encoded()), .waitForNotification]
    }

    private mutating func unexpected(_ expecting: SecureDFUOpcode, _ response: SecureDFUResponse,
                                     _ bytes: [UInt8]) -> [Action] {
        if case .failure(let opcode, let result, let extended) = response, opcode == expecting.rawValue {
            return fail(.remote(result, extended: extended))
        }
        return fail(.unexpectedResponse(expecting: expecting, notification: bytes))
    }

    private mutating func fail(_ error: SecureDFUError) -> [Action] {
        phase = .done
        return [.failed(error)]
    }
}
