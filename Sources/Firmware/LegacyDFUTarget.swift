import Wearables

/// What the simulated Legacy bootloader does in answer to a write.
public enum LegacyDFUTargetOutput: Equatable, Sendable {
    /// Notify these bytes on the control point.
    case notify([UInt8])
    /// The image received so far crossed a mark set with `addProgressMark(_:)` (for injecting a link drop).
    case passedProgressMark(Double)
    /// The bootloader resets: after Activate (`installedImage` holds the new image) or Reset. The link drops.
    case reset
}

/// The bootloader's side of Legacy DFU, as a value: control point and packet writes in, notifications out. For the
/// simulator, which owns the GATT service and the link.
///
/// It follows the SDK 11 bootloader (`dfu_transport_ble.c`, `dfu_single_bank.c`, `dfu_init_template.c`):
/// - Start takes the three sizes from the packet characteristic. An application together with a SoftDevice or
///   bootloader, a size that is not a multiple of 4, or sizes that do not match the mode are `notSupported`; a
///   total above `maxImageSize` is `dataSizeExceedsLimit`; a Start while a transfer is open is `invalidState`.
/// - Init-complete parses the init packet and checks device type and revision (unless the target's are 0xFFFF)
///   and that the SoftDevice list names 0xFFFE or the installed SoftDevice; anything wrong is `operationFailed`,
///   which is what the SDK maps the template's `NRF_ERROR_INVALID_DATA` to outside validation.
/// - Image packets before Receive Firmware are answered `invalidState`, one answer per packet as the SDK does;
///   more bytes than announced end the transfer with `dataSizeExceedsLimit`. The last byte is answered with
///   success instead of a receipt.
/// - Validate compares the image's CRC-16/CCITT with the init packet's: `crcError` when they differ.
///
/// With `Configuration.speaksDFUVersion1` it is a bootloader older than SDK 7 instead, as Android-DFU-Library's
/// `LegacyDfuImpl` expects one (*modeled*: the SDK 6 sources are not at hand): it has no version characteristic,
/// answers a Start with a mode `notSupported` once the sizes arrived, takes `01` followed by the application's size
/// alone (applications only), and `02` followed by the init packet in one packet write, answered at once; Validate
/// compares the image's CRC-16 with the init packet's last two bytes (the whole packet in SDK 4.3 – 6, which was the
/// CRC alone; the end of the SDK 7 format too). Init-start / Init-complete are `notSupported` there, and the v1
/// requests are `notSupported` on an SDK 11 bootloader.
///
/// For fault injection, `addProgressMark(_:)` reports when the image passes a fraction and
/// `rejectNextValidation(_:)` makes the next Validate answer a status of the caller's choosing.
///
/// Unlike `SecureDFUTarget`, nothing survives the link: Legacy DFU has no way to resume, so `linkDropped()`
/// abandons the transfer (Nordic's library would answer a leftover transfer's `invalidState` with Reset anyway).
public struct LegacyDFUTarget: Sendable {
    public struct Configuration: Sendable {
        /// The device's type and revision; 0xFFFF accepts any init packet's.
        public var deviceType: UInt16 = LegacyDFUInitPacket.anyDevice
        public var deviceRevision: UInt16 = LegacyDFUInitPacket.anyDevice
        /// The installed SoftDevice's firmware id (0x0081 is S132 v2.0.0).
        public var softDeviceID: UInt16 = 0x0081
        /// The bank the image is received into.
        public var maxImageSize = 232 * 1024
        public var version = LegacyDFUVersion.sdk11
        /// A bootloader older than SDK 7: DFU v1 only, no version characteristic.
        public var speaksDFUVersion1 = false

        public init() {}
    }

    private enum State: Equatable {
        case idle
        case awaitingSizes(LegacyDFUImageType)
        /// DFU v1's Start: the application's size alone follows.
        case awaitingApplicationSize
        case started
        case receivingInitPacket
        /// DFU v1's init packet: the next packet write is all of it.
        case receivingInitPacketV1
        case initPacketAccepted
        case receivingFirmware
        case firmwareReceived
        case validated
    }

    public let configuration: Configuration
    private var state = State.idle
    private var sizes = LegacyDFUImageSizes()
    private var initPacketBytes: [UInt8] = []
    /// The accepted init packet, when it parses as SDK 7's format (a DFU v1 one may be a bare CRC-16).
    private var initPacket: LegacyDFUInitPacket?
    /// The image's CRC-16 the accepted init packet carries.
    private var expectedCRC16: UInt16?
    private var image: [UInt8] = []
    private var packetReceiptInterval: UInt16 = 0
    private var packetsUntilReceipt: UInt16 = 0
    private var progressMarks: [Double] = []
    /// A Start arrived while a transfer was open; its sizes are answered `invalidState`.
    private var startRefused = false
    private var pendingValidationStatus: LegacyDFUStatus?

    /// The image the last successful transfer installed.
    public private(set) var installedImage: [UInt8]?
    /// The init packet that came with `installedImage` (its application version is the new firmware's); nil when it
    /// was a DFU v1 packet that does not parse as SDK 7's format.
    public private(set) var installedInitPacket: LegacyDFUInitPacket?
    /// The sizes the Start of `installedImage` announced: which parts it holds.
    public private(set) var installedSizes: LegacyDFUImageSizes?

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The version characteristic's value; nil for a DFU v1 bootloader, which has no such characteristic.
    public var versionValue: [UInt8]? { configuration.speaksDFUVersion1 ? nil : configuration.version.encoded() }

    /// Received image bytes over the announced total; 0 before Start.
    public var progress: Double {
        sizes.total == 0 ? 0 : Double(image.count) / Double(sizes.total)
    }

    /// Image bytes received in the current transfer.
    public var receivedImageBytes: Int { image.count }

    /// Report `.passedProgressMark(fraction)` once, from the packet write that takes `progress` to `fraction` or
    /// beyond.
    public mutating func addProgressMark(_ fraction: Double) {
        progressMarks.append(fraction)
        progressMarks.sort()
    }

    /// The next Validate that finds the whole image received answers `status` instead of checking the CRC, once;
    /// the transfer stays where it was (validated again, it passes). A link drop does not cancel it.
    public mutating func rejectNextValidation(_ status: LegacyDFUStatus) {
        pendingValidationStatus = status
    }

    /// The transfer is abandoned; the next one starts from Start.
    public mutating func linkDropped() {
        state = .idle
        sizes = LegacyDFUImageSizes()
        initPacketBytes = []
        initPacket = nil
        expectedCRC16 = nil
        image = []
        packetReceiptInterval = 0
        packetsUntilReceipt = 0
        startRefused = false
    }

    // MARK: Writes

    public mutating func writeControlPoint(_ value: [UInt8]) -> [LegacyDFUTargetOutput] {
        let request: LegacyDFURequest
        do {
            request = try LegacyDFURequest(decoding: value)
        } catch {
            return [respond(value.first ?? 0, .notSupported)]
        }
        switch request {
        case .start(let type):
            // The SDK answers Start once the sizes arrived, also when it refuses it.
            if state == .idle { state = .awaitingSizes(type) } else { startRefused = true }
            return []
        case .startV1:
            if state == .idle { state = .awaitingApplicationSize } else { startRefused = true }
            return []
        case .initParametersV1:
            guard configuration.speaksDFUVersion1 else { return [respond(.initParameters, .notSupported)] }
            guard state == .started else { return [respond(.initParameters, .invalidState)] }
            state = .receivingInitPacketV1
            return []
        case .initParameters where configuration.speaksDFUVersion1:
            return [respond(.initParameters, .notSupported)]
        case .initParameters(complete: false):
            guard state == .started else { return [respond(.initParameters, .invalidState)] }
            state = .receivingInitPacket
            initPacketBytes = []
            return []
        case .initParameters(complete: true):
            guard state == .receivingInitPacket else { return [respond(.initParameters, .invalidState)] }
            let status = checkInitPacket()
            state = status == .success ? .initPacketAccepted : .started
            return [respond(.initParameters, status)]
        case .packetReceiptNotificationRequest(let interval):
            packetReceiptInterval = interval
            packetsUntilReceipt = interval
            return []
        case .receiveFirmware:
            guard state == .initPacketAccepted else { return [respond(.receiveFirmware, .invalidState)] }
            state = .receivingFirmware
            image = []
            return []
        case .validate:
            guard state == .firmwareReceived, let expectedCRC16 else { return [respond(.validate, .invalidState)] }
            if let status = pendingValidationStatus {
                pendingValidationStatus = nil
                return [respond(.validate, status)]
            }
            guard LegacyDFUImageCRC.checksum(image) == expectedCRC16 else {
                return [respond(.validate, .crcError)]
            }
            state = .validated
            return [respond(.validate, .success)]
        case .activateAndReset:
            guard state == .validated else { return [respond(.activateAndReset, .invalidState)] }
            installedImage = image
            installedInitPacket = initPacket
            installedSizes = sizes
            linkDropped()
            return [.reset]
        case .reset:
            linkDropped()
            return [.reset]
        case .reportReceivedImageSize:
            return [.notify(LegacyDFUNotification.receivedImageSize(UInt32(image.count)).encoded())]
        }
    }

    public mutating func writePacket(_ value: [UInt8]) -> [LegacyDFUTargetOutput] {
        if startRefused {
            startRefused = false
            return [respond(.start, .invalidState)]
        }
        switch state {
        case .awaitingSizes(let type):
            guard !configuration.speaksDFUVersion1 else {
                state = .idle
                return [respond(.start, .notSupported)]
            }
            return [respond(.start, start(type, sizes: value))]
        case .awaitingApplicationSize:
            guard configuration.speaksDFUVersion1, value.count == 4,
                  let size = try? LegacyDFUImageSizes(decoding: [UInt8](repeating: 0, count: 8) + value) else {
                state = .idle
                return [respond(.start, .notSupported)]
            }
            return [respond(.start, start(.application, sizes: size.encoded()))]
        case .receivingInitPacket:
            initPacketBytes += value
            return []
        case .receivingInitPacketV1:
            initPacketBytes = value
            let status = checkInitPacketV1()
            state = status == .success ? .initPacketAccepted : .started
            return [respond(.initParameters, status)]
        case .receivingFirmware:
            return receiveImage(value)
        case .idle, .started, .initPacketAccepted, .firmwareReceived, .validated:
            return [respond(.receiveFirmware, .invalidState)]
        }
    }

    // MARK: Steps

    private mutating func start(_ type: LegacyDFUImageType, sizes value: [UInt8]) -> LegacyDFUStatus {
        guard let sizes = try? LegacyDFUImageSizes(decoding: value) else {
            state = .idle
            return .notSupported
        }
        let named: [(LegacyDFUImageType, UInt32)] = [
            (.softDevice, sizes.softDevice), (.bootloader, sizes.bootloader), (.application, sizes.application),
        ]
        let consistent = named.allSatisfy { image, size in type.contains(image) == (size > 0) }
        let combinesApplication = type.contains(.application) && type != .application
        guard !type.isEmpty, consistent, !combinesApplication, named.allSatisfy({ $0.1 % 4 == 0 }) else {
            state = .idle
            return .notSupported
        }
        guard sizes.total <= configuration.maxImageSize else {
            state = .idle
            return .dataSizeExceedsLimit
        }
        self.sizes = sizes
        state = .started
        return .success
    }

    private mutating func checkInitPacket() -> LegacyDFUStatus {
        guard let packet = try? LegacyDFUInitPacket(decoding: initPacketBytes) else { return .operationFailed }
        let typeMatches = configuration.deviceType == LegacyDFUInitPacket.anyDevice
            || packet.deviceType == configuration.deviceType
        let revisionMatches = configuration.deviceRevision == LegacyDFUInitPacket.anyDevice
            || packet.deviceRevision == configuration.deviceRevision
        let softDeviceMatches = packet.softDevices.contains {
            $0 == LegacyDFUInitPacket.anySoftDevice || $0 == configuration.softDeviceID
        }
        guard typeMatches, revisionMatches, softDeviceMatches else { return .operationFailed }
        initPacket = packet
        expectedCRC16 = packet.imageCRC16
        return .success
    }

    /// DFU v1: nothing to check but that the CRC-16 is there, in the last two bytes.
    private mutating func checkInitPacketV1() -> LegacyDFUStatus {
        guard initPacketBytes.count >= 2 else { return .operationFailed }
        let tail = initPacketBytes.suffix(2)
        expectedCRC16 = UInt16(tail[tail.startIndex]) | UInt16(tail[tail.startIndex + 1]) << 8
        initPacket = try? LegacyDFUInitPacket(decoding: initPacketBytes)
        return .success
    }

    private mutating func receiveImage(_ bytes: [UInt8]) -> [LegacyDFUTargetOutput] {
        guard image.count + bytes.count <= sizes.total else {
            linkDropped()
            return [respond(.receiveFirmware, .dataSizeExceedsLimit)]
        }
        image += bytes
        var outputs: [LegacyDFUTargetOutput] = []
        while let mark = progressMarks.first, progress >= mark {
            progressMarks.removeFirst()
            outputs.append(.passedProgressMark(mark))
        }
        if image.count == sizes.total {
            state = .firmwareReceived
            return outputs + [respond(.receiveFirmware, .success)]
        }
        guard packetReceiptInterval > 0 else { return outputs }
        packetsUntilReceipt &-= 1
        guard packetsUntilReceipt == 0 else { return outputs }
        packetsUntilReceipt = packetReceiptInterval
        return outputs + [.notify(LegacyDFUNotification.packetReceipt(bytesReceived: UInt32(image.count)).encoded())]
    }

    private func respond(_ opcode: LegacyDFUOpcode, _ status: LegacyDFUStatus) -> LegacyDFUTargetOutput {
        respond(opcode.rawValue, status)
    }

    private func respond(_ opcode: UInt8, _ status: LegacyDFUStatus) -> LegacyDFUTargetOutput {
        .notify(LegacyDFUNotification.response(requestOpcode: opcode, status: status).encoded())
    }
}
