import Wearables

/// Why a Legacy DFU transfer stopped. Every case ends up as the MQTT contract's `DFU_FAILED`.
public enum LegacyDFUError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bootloader answered `request` with `status`.
    case remote(LegacyDFUStatus, request: LegacyDFUOpcode)
    /// A receipt counted other bytes than we sent: something was lost, and Legacy DFU cannot go back.
    case receiptMismatch(sent: Int, reported: Int)
    case malformedNotification([UInt8])
    case unexpectedResponse(expecting: LegacyDFUOpcode, notification: [UInt8])
    case emptyInput(String)
    /// The image type is not one Legacy DFU sends in one transfer (application alone, SoftDevice and/or bootloader).
    case unsupportedImageType(LegacyDFUImageType)
    /// A SoftDevice and bootloader image without the SoftDevice part's size, which Start must announce.
    case missingImageSplit(imageBytes: Int, softDeviceBytes: Int?)

    /// `DFU_FAILED`, with the bootloader's status as `vendorCode` when it gave one.
    public var commandError: CommandError {
        if case .remote(let status, _) = self {
            return CommandError(.dfuFailed, description, vendorCode: Int(status.rawValue))
        }
        return CommandError(.dfuFailed, description)
    }

    public var description: String {
        switch self {
        case .remote(let status, let request): "bootloader answered \(request) with \(status)"
        case .receiptMismatch(let sent, let reported): "sent \(sent) bytes, bootloader counted \(reported)"
        case .malformedNotification(let bytes): "malformed control point notification \(bytes)"
        case .unexpectedResponse(let expecting, let bytes): "expected the answer to \(expecting), got \(bytes)"
        case .emptyInput(let what): "nothing to send: \(what) is empty"
        case .unsupportedImageType(let type): "cannot send image type \(type.rawValue) as one image"
        case .missingImageSplit(let imageBytes, let softDeviceBytes):
            "a \(imageBytes)-byte SoftDevice and bootloader image needs the size of its SoftDevice part (the "
                + "manifest's sd_size and bl_size), " + (softDeviceBytes.map { "not \($0) bytes" } ?? "which is missing")
        }
    }
}

/// The DFU controller's side of Legacy DFU, as a value, in Android-DFU-Library's `LegacyDfuImpl` order: Start with
/// the image sizes, the init packet between Init-start and Init-complete, the receipt interval, Receive Firmware
/// and the image (waiting for a receipt after every n-th packet), Validate, Activate and Reset. After any error
/// response it writes Reset, as Nordic's library does, so the bootloader does not sit in a half-done transfer.
///
/// A SoftDevice and bootloader image goes as one transfer with mode 0x03 and both sizes, as `LegacyDfuImpl.performDfu`
/// sends the `softdevice_bootloader` part (the split is the manifest's `sd_size`).
///
/// A bootloader older than SDK 7 (DFU v1) answers a Start with a mode `NOT_SUPPORTED`. For an application the client
/// then does what `LegacyDfuImpl` does ("Switching to DFU v.1"): Start without mode and the size alone, the init
/// packet after a single Init Parameters `02` (answered once it arrived, no Init-complete), and a receipt interval of
/// at most 10 packets (those bootloaders cannot write flash faster; 10 replaces 0 too). A SoftDevice or bootloader
/// refused that way fails, as it does in Nordic's library.
///
/// There is no resume in Legacy DFU: the protocol has no way to ask what the bootloader kept. After a link drop
/// the driver reconnects and runs a new client from the start; a bootloader that still holds the old transfer
/// answers Start with `invalidState`, which this client reports after writing Reset (Nordic's library resets and
/// starts over in that case; the driver does so on the next connection).
public struct LegacyDFUClient: Sendable {
    public typealias Action = DFUClientAction<LegacyDFUError>

    public enum Event: Equatable, Sendable {
        case notification([UInt8])
    }

    /// Android-DFU-Library's default receipt interval.
    public static let defaultPacketReceiptInterval: UInt16 = 12
    /// The largest receipt interval a DFU v1 bootloader keeps up with (`LegacyDfuImpl`: "PRN = 10 may be the highest
    /// supported value").
    public static let maximumV1PacketReceiptInterval: UInt16 = 10
    /// Legacy bootloaders do not negotiate a larger MTU.
    public static let defaultPacketSize = 20

    public let initPacket: [UInt8]
    public let firmware: [UInt8]
    public let imageType: LegacyDFUImageType
    /// The SoftDevice part of a SoftDevice and bootloader image; the rest of `firmware` is the bootloader.
    public let softDeviceSize: Int?
    public let packetReceiptInterval: UInt16
    public let packetSize: Int

    private enum Phase: Equatable {
        case notStarted
        case starting
        case startingV1
        case sendingInitPacket
        case awaitingReceipt
        case receivingFirmware
        case validating
        case done
    }

    private var phase = Phase.notStarted
    /// The bootloader speaks DFU v1 (it refused the Start with a mode).
    private var usesV1 = false
    /// The receipt interval in use: `packetReceiptInterval`, or at most 10 for a DFU v1 bootloader.
    private var receiptInterval: UInt16
    private var sentOffset = 0
    private var packetsSinceReceipt = 0
    private var acknowledgedBytes = 0

    /// - Parameter softDeviceSize: for `imageType` SoftDevice and bootloader, the size of the SoftDevice part.
    public init(initPacket: [UInt8], firmware: [UInt8], imageType: LegacyDFUImageType = .application,
                softDeviceSize: Int? = nil, packetReceiptInterval: UInt16 = defaultPacketReceiptInterval,
                packetSize: Int = defaultPacketSize) {
        self.initPacket = initPacket
        self.firmware = firmware
        self.imageType = imageType
        self.softDeviceSize = softDeviceSize
        self.packetReceiptInterval = packetReceiptInterval
        receiptInterval = packetReceiptInterval
        self.packetSize = max(1, packetSize)
    }

    /// Bytes of the image the bootloader has counted (by receipt, and all of them once it answered Receive).
    public var progress: DFUTransferProgress {
        DFUTransferProgress(acknowledgedBytes: acknowledgedBytes, totalBytes: firmware.count)
    }

    public mutating func start() -> [Action] {
        guard phase == .notStarted else { return [] }
        guard !initPacket.isEmpty else { return fail(.emptyInput("the init packet"), reset: false) }
        guard !firmware.isEmpty else { return fail(.emptyInput("the image"), reset: false) }
        let size = UInt32(firmware.count)
        let sizes: LegacyDFUImageSizes
        switch imageType {
        case .application: sizes = LegacyDFUImageSizes(application: size)
        case .softDevice: sizes = LegacyDFUImageSizes(softDevice: size)
        case .bootloader: sizes = LegacyDFUImageSizes(bootloader: size)
        case [.softDevice, .bootloader]:
            guard let softDevice = softDeviceSize, softDevice > 0, softDevice < firmware.count else {
                return fail(.missingImageSplit(imageBytes: firmware.count, softDeviceBytes: softDeviceSize), reset: false)
            }
            sizes = LegacyDFUImageSizes(softDevice: UInt32(softDevice), bootloader: size - UInt32(softDevice))
        default: return fail(.unsupportedImageType(imageType), reset: false)
        }
        phase = .starting
        return [.writeControl(LegacyDFURequest.start(imageType).encoded()), .writePacket(sizes.encoded()),
                .waitForNotification]
    }

    public mutating func handle(_ event: Event) -> [Action] {
        guard case .notification(let bytes) = event else { return [] }
        guard phase != .notStarted, phase != .done else { return [] }
        let notification: LegacyDFUNotification
        do { notification = try LegacyDFUNotification(decoding: bytes) } catch {
            return fail(.malformedNotification(bytes))
        }

        switch phase {
        case .notStarted, .done:
            return []
        case .starting:
            let refused = notification == .response(requestOpcode: LegacyDFUOpcode.start.rawValue, status: .notSupported)
            if refused, imageType == .application { return startV1() }
            return expectSuccess(.start, notification, bytes) { client in client.sendInitPacket() }
        case .startingV1:
            return expectSuccess(.start, notification, bytes) { client in client.sendInitPacket() }
        case .sendingInitPacket:
            return expectSuccess(.initParameters, notification, bytes) { client in
                client.packetsSinceReceipt = 0
                var actions: [Action] = []
                if client.receiptInterval > 0 {
                    actions.append(.writeControl(
                        LegacyDFURequest.packetReceiptNotificationRequest(client.receiptInterval).encoded()))
                }
                actions.append(.writeControl(LegacyDFURequest.receiveFirmware.encoded()))
                return actions + client.streamFirmware()
            }
        case .awaitingReceipt:
            guard case .packetReceipt(let received) = notification else {
                return expectSuccess(.receiveFirmware, notification, bytes) { client in client.firmwareReceived() }
            }
            guard Int(received) == sentOffset else {
                return fail(.receiptMismatch(sent: sentOffset, reported: Int(received)))
            }
            acknowledgedBytes = sentOffset
            return streamFirmware()
        case .receivingFirmware:
            // The SDK answers the last packet instead of counting it; a bootloader that also sends the receipt
            // due with it is tolerated.
            if case .packetReceipt = notification { return [.waitForNotification] }
            return expectSuccess(.receiveFirmware, notification, bytes) { client in client.firmwareReceived() }
        case .validating:
            return expectSuccess(.validate, notification, bytes) { client in
                client.phase = .done
                return [.writeControl(LegacyDFURequest.activateAndReset.encoded()), .finished]
            }
        }
    }

    /// DFU v1, after a Start with a mode was refused: the application's size alone.
    private mutating func startV1() -> [Action] {
        phase = .startingV1
        usesV1 = true
        let maximum = Self.maximumV1PacketReceiptInterval
        receiptInterval = (1...maximum).contains(packetReceiptInterval) ? packetReceiptInterval : maximum
        return [.writeControl(LegacyDFURequest.startV1.encoded()),
                .writePacket(LegacyDFUImageSizes.encodedV1(applicationSize: UInt32(firmware.count))),
                .waitForNotification]
    }

    private mutating func sendInitPacket() -> [Action] {
        phase = .sendingInitPacket
        let open = usesV1 ? LegacyDFURequest.initParametersV1 : .initParameters(complete: false)
        var actions: [Action] = [.writeControl(open.encoded())]
        for start in stride(from: 0, to: initPacket.count, by: packetSize) {
            actions.append(.writePacket(Array(initPacket[start..<min(start + packetSize, initPacket.count)])))
        }
        if !usesV1 { actions.append(.writeControl(LegacyDFURequest.initParameters(complete: true).encoded())) }
        return actions + [.waitForNotification]
    }

    /// Packets up to the next receipt, or all the rest and the wait for Receive Firmware's answer.
    private mutating func streamFirmware() -> [Action] {
        var actions: [Action] = []
        while sentOffset < firmware.count {
            let end = min(sentOffset + packetSize, firmware.count)
            actions.append(.writePacket(Array(firmware[sentOffset..<end])))
            sentOffset = end
            guard receiptInterval > 0, sentOffset < firmware.count else { continue }
            packetsSinceReceipt += 1
            if packetsSinceReceipt == Int(receiptInterval) {
                packetsSinceReceipt = 0
                phase = .awaitingReceipt
                return actions + [.waitForNotification]
            }
        }
        phase = .receivingFirmware
        return actions + [.waitForNotification]
    }

    private mutating func firmwareReceived() -> [Action] {
        acknowledgedBytes = firmware.count
        phase = .validating
        return [.writeControl(LegacyDFURequest.validate.encoded()), .waitForNotification]
    }

    private mutating func expectSuccess(
        _ request: LegacyDFUOpcode, _ notification: LegacyDFUNotification, _ bytes: [UInt8],
        then next: (inout LegacyDFUClient) -> [Action]
    ) -> [Action] {
        guard case .response(let opcode, let status) = notification, opcode == request.rawValue else {
            return fail(.unexpectedResponse(expecting: request, notification: bytes))
        }
        guard status == .success else { return fail(.remote(status, request: request)) }
        return next(&self)
    }

    /// Fails, first writing Reset unless nothing was started.
    private mutating func fail(_ error: LegacyDFUError, reset: Bool = true) -> [Action] {
        phase = .done
        return (reset ? [.writeControl(LegacyDFURequest.reset.encoded())] : []) + [.failed(error)]
    }
}
