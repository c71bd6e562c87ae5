import BlueZ
import Synchronization
import Wearables

/// Which Nordic DFU a connected device offers, read from its GATT table: it decides how an image gets onto the
/// device (docs/protocols/dfu.md, "Choosing the protocol").
public enum NordicDFUMode: String, Sendable, Equatable {
    /// A Secure DFU bootloader (0xFE59 with Control Point and Packet): the transfer can start.
    case secureBootloader = "secure_bootloader"
    /// An application with the buttonless characteristic 8EC90003: it must first reboot into its bootloader.
    case secureButtonless = "secure_buttonless"
    /// A Legacy DFU bootloader (0x1530 whose version is not 1, or has none): the transfer can start.
    case legacyBootloader = "legacy_bootloader"
    /// An application exposing the Legacy DFU service (version 1): Start DFU makes it jump to its bootloader.
    case legacyApplication = "legacy_application"

    public var isBootloader: Bool { self == .secureBootloader || self == .legacyBootloader }
    public var isLegacy: Bool { self == .legacyBootloader || self == .legacyApplication }

    /// The mode `link`'s device offers; nil when it has no Nordic DFU at all.
    public static func of(_ link: DeviceLink) async -> NordicDFUMode? {
        if link.characteristic(service: SecureDFUUUID.service, SecureDFUUUID.controlPoint) != nil,
           link.characteristic(service: SecureDFUUUID.service, SecureDFUUUID.packet) != nil {
            return .secureBootloader
        }
        if link.characteristic(service: SecureDFUUUID.service, SecureDFUUUID.buttonlessWithoutBonds) != nil {
            return .secureButtonless
        }
        guard link.characteristic(service: LegacyDFUUUID.service, LegacyDFUUUID.controlPoint) != nil else { return nil }
        // Nordic's application-side DFU service answers version 1; bootloaders answer their SDK's (0.5 … 0.8) or
        // have no version characteristic (SDK 6 and older).
        if let version = link.characteristic(service: LegacyDFUUUID.service, LegacyDFUUUID.version),
           let bytes = try? await link.read(version), let decoded = try? LegacyDFUVersion(decoding: bytes),
           decoded == LegacyDFUVersion(major: 0, minor: 1) {
            return .legacyApplication
        }
        return .legacyBootloader
    }
}

/// Talking to a Nordic device over one connection: asking an application to reboot into its bootloader, and
/// running a Secure or Legacy DFU client against a bootloader. Connecting, reconnecting and retrying are the
/// caller's (the gateway's `FirmwareUpdate`), since the bootloader is another device on the bus.
public enum NordicDFUTransfer {
    /// How long a bootloader may stay silent when an answer is due. Executing an object writes flash, which
    /// takes tens of milliseconds a page; a bootloader silent this long is gone.
    public static let answerTimeout = Duration.seconds(15)

    /// Asks the application on `link` to restart into its bootloader; returns once it agreed (or dropped the link,
    /// which is how some firmware agrees). Throws `DFU_FAILED` with the application's result as `vendor_code`.
    public static func enterBootloader(_ mode: NordicDFUMode, link: DeviceLink) async throws(CommandError) {
        switch mode {
        case .secureBootloader, .legacyBootloader:
            return
        case .secureButtonless:
            guard let buttonless = link.characteristic(service: SecureDFUUUID.service,
                                                       SecureDFUUUID.buttonlessWithoutBonds) else {
                throw CommandError(.notSupported, "the device lost its buttonless DFU characteristic")
            }
            let answers = try await ControlPointInbox.subscribe(buttonless, link: link)
            defer { answers.close() }
            do throws(CommandError) {
                try await link.write(buttonless, SecureDFUButtonless.enterBootloaderRequest, withResponse: true)
            } catch where error.code == .deviceDisconnected {
                return
            }
            guard let answer = await answers.next(timeout: answerTimeout) else {
                // No indication: the device reset before it could answer, or never will.
                if link.isConnected { throw CommandError(.dfuFailed, "the device did not answer Enter Bootloader") }
                return
            }
            guard let result = SecureDFUButtonless.result(of: answer) else {
                throw CommandError(.dfuFailed, "the device answered Enter Bootloader with \(answer)")
            }
            guard result == .success else {
                throw CommandError(.dfuFailed, "the device refused to enter its bootloader: \(result)",
                                   vendorCode: Int(result.rawValue))
            }
        case .legacyApplication:
            guard let control = link.characteristic(service: LegacyDFUUUID.service, LegacyDFUUUID.controlPoint) else {
                throw CommandError(.notSupported, "the device lost its Legacy DFU control point")
            }
            // As Android-DFU-Library: notifications on, then Start DFU (application); the application resets at
            // once instead of answering.
            let answers = try await ControlPointInbox.subscribe(control, link: link)
            defer { answers.close() }
            do throws(CommandError) {
                try await link.write(control, LegacyDFURequest.start(.application).encoded(), withResponse: true)
            } catch where error.code == .deviceDisconnected {
                return
            }
        }
    }

    /// Throws `DFU_FAILED` when a device offering `mode` cannot take one of `images`, before anything is sent:
    /// Legacy DFU takes neither the keys that combine an application with a SoftDevice or bootloader
    /// (Android-DFU-Library's `LegacyDfuImpl` refuses them: "Secure DFU is required") nor a SoftDevice and bootloader
    /// image whose split the manifest does not give, nor a Secure init packet (the bootloader would refuse it after the
    /// device rebooted for it); Secure DFU needs Secure init packets.
    public static func checkSendable(_ images: [DFUImage], mode: NordicDFUMode) throws(CommandError) {
        for image in images {
            if mode.isLegacy {
                guard let type = LegacyDFUImageType(image.kind) else {
                    throw CommandError(.dfuFailed, "the package's \(image.kind.manifestKey) image needs Secure DFU, and "
                                       + "this device's bootloader is Legacy DFU; nothing was sent")
                }
                if image.parsedInit != nil {
                    throw CommandError(.dfuFailed, "the package's \(image.datFile) is a Secure DFU init packet, and this "
                                       + "device's bootloader is Legacy DFU; nothing was sent")
                }
                if type == [.softDevice, .bootloader], image.softDeviceSize.map({ $0 <= 0 || $0 >= image.firmware.count }) ?? true {
                    throw CommandError(.dfuFailed, "the package's \(image.kind.manifestKey) image has no sd_size and "
                                       + "bl_size in its manifest, which Legacy DFU must announce; nothing was sent")
                }
            } else if image.parsedInit == nil {
                throw CommandError(.dfuFailed, "the package's \(image.datFile) is no Secure DFU init packet "
                                   + "(a Legacy DFU package?), and this device's bootloader is Secure DFU; nothing was sent")
            }
        }
    }

    /// Sends `image` to the bootloader on `link`. Returns true once the bootloader accepted it (it resets into it
    /// now), false when the link dropped or the bootloader went silent: the caller reconnects and calls again (a
    /// Secure DFU bootloader resumes where it was, a Legacy one starts over). Throws `DFU_FAILED` when the
    /// bootloader refused something, with its code as `vendor_code`, and when the task is cancelled.
    public static func send(_ image: DFUImage, mode: NordicDFUMode, link: DeviceLink,
                            progress: @escaping @Sendable (DFUTransferProgress) -> Void) async throws(CommandError) -> Bool {
        try checkSendable([image], mode: mode)
        if mode.isLegacy {
            guard let control = link.characteristic(service: LegacyDFUUUID.service, LegacyDFUUUID.controlPoint),
                  let packet = link.characteristic(service: LegacyDFUUUID.service, LegacyDFUUUID.packet),
                  let type = LegacyDFUImageType(image.kind) else {
                throw CommandError(.notSupported, "the bootloader lacks the Legacy DFU control point or packet")
            }
            let client = LegacyDFUClient(initPacket: image.initPacket, firmware: image.firmware, imageType: type,
                                         softDeviceSize: image.softDeviceSize)
            return try await run(client, control: control, packet: packet, link: link, progress: progress)
        }
        guard let control = link.characteristic(service: SecureDFUUUID.service, SecureDFUUUID.controlPoint),
              let packet = link.characteristic(service: SecureDFUUUID.service, SecureDFUUUID.packet) else {
            throw CommandError(.notSupported, "the bootloader lacks the Secure DFU control point or packet")
        }
        let client = SecureDFUClient(initPacket: image.initPacket, firmware: image.firmware,
                                     packetSize: SecureDFUClient.packetSize(forATTMTU: packet.mtu ?? 23))
        return try await run(client, control: control, packet: packet, link: link, progress: progress)
    }

    private static func run<Client: DFUTransferClient>(_ initial: Client, control: GattCharacteristicInfo,
                            packet: GattCharacteristicInfo, link: DeviceLink,
                            progress: @Sendable (DFUTransferProgress) -> Void) async throws(CommandError) -> Bool {
        var client = initial
        let answers: ControlPointInbox
        do throws(CommandError) {
            answers = try await ControlPointInbox.subscribe(control, link: link)
        } catch where error.code == .deviceDisconnected || error.code == .timeout {
            return false
        }
        defer { answers.close() }
        var actions = client.start()
        while true {
            var next: [DFUClientAction<Client.Failure>]?
            for action in actions {
                if Task.isCancelled { throw CommandError(.dfuFailed, "the update was cancelled") }
                switch action {
                case .writeControl(let bytes), .writePacket(let bytes):
                    let isControl = if case .writeControl = action { true } else { false }
                    do throws(CommandError) {
                        try await link.write(isControl ? control : packet, bytes, withResponse: isControl)
                    } catch where error.code == .deviceDisconnected || error.code == .timeout {
                        return false
                    } catch {
                        if await linkGoesDown(link) { return false }
                        throw CommandError(.dfuFailed, "writing to the bootloader failed: \(error.message)")
                    }
                case .waitForNotification:
                    guard let answer = await answers.next(timeout: answerTimeout) else { return false }
                    next = client.answer(answer)
                    progress(client.progress)
                case .finished:
                    return true
                case .failed(let error):
                    throw error.commandError
                }
                if next != nil { break }
            }
            guard let following = next else {
                throw CommandError(.internalError, "the DFU client stopped without finishing")
            }
            actions = following
        }
    }
}

/// Whether `link` is down, or goes down within a moment. BlueZ fails a write that races the link's end with a
/// generic `Failed` before `Connected` turns false, and such a write is a lost link to resume, not a refusal.
private func linkGoesDown(_ link: DeviceLink) async -> Bool {
    await link.goesDown(within: .seconds(2))
}

extension LegacyDFUImageType {
    /// The Legacy DFU type of one package image (SoftDevice and bootloader together: mode 0x03, as
    /// `LegacyDfuImpl` sends `softdevice_bootloader`); nil for the keys that combine an application with a SoftDevice
    /// or bootloader, which only Secure DFU takes.
    init?(_ kind: DFUImageKind) {
        switch kind {
        case .application: self = .application
        case .softDevice: self = .softDevice
        case .bootloader: self = .bootloader
        case .softDeviceBootloader: self = [.softDevice, .bootloader]
        case .softDeviceApplication, .bootloaderApplication, .softDeviceBootloaderApplication: return nil
        }
    }
}

/// What `NordicDFUTransfer` needs of a client: both pure clients, seen alike.
protocol DFUTransferClient: Sendable {
    associatedtype Failure: DFUTransferFailure
    mutating func start() -> [DFUClientAction<Failure>]
    mutating func answer(_ notification: [UInt8]) -> [DFUClientAction<Failure>]
    var progress: DFUTransferProgress { get }
}

extension SecureDFUClient: DFUTransferClient {
    mutating func answer(_ notification: [UInt8]) -> [Action] { handle(.notification(notification)) }
}

extension LegacyDFUClient: DFUTransferClient {
    mutating func answer(_ notification: [UInt8]) -> [Action] { handle(.notification(notification)) }
}

/// A control point's notifications (or indications), taken one at a time with a deadline: the DFU clients wait
/// for one answer after each request.
final class ControlPointInbox: Sendable {
    private struct State {
        var queued: [[UInt8]] = []
        var waiter: CheckedContinuation<[UInt8]?, Never>?
        /// Which `next` call the waiter belongs to, so a late timer cannot end a later wait.
        var waiterID = 0
        var ended = false
    }

    private let state = Mutex(State())
    private let subscription: Mutex<NotificationSubscription?> = Mutex(nil)

    private init() {}

    /// Subscribes before the first request, so no answer is missed.
    static func subscribe(_ characteristic: GattCharacteristicInfo, link: DeviceLink) async throws(CommandError) -> ControlPointInbox {
        let inbox = ControlPointInbox()
        let subscription = try await link.subscribe(characteristic) { inbox.deliver($0) }
        inbox.subscription.withLock { $0 = subscription }
        // Unstructured: ends the inbox when the subscription ends, for the transfer's length.
        Task {
            await subscription.ended()
            inbox.end()
        }
        return inbox
    }

    /// The next value; nil when none came within `timeout` or the subscription ended (the link dropped).
    func next(timeout: Duration) async -> [UInt8]? {
        let id = state.withLock { state in
            state.waiterID += 1
            return state.waiterID
        }
        // Unstructured: a response's timeout inside a continuation; cancelled when the response comes.
        let timer = Task { [self] in
            try? await Task.sleep(for: timeout)
            if !Task.isCancelled { giveUp(id) }
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let immediate: [UInt8]?? = state.withLock { state in
                    if !state.queued.isEmpty { return .some(state.queued.removeFirst()) }
                    if state.ended || state.waiterID != id { return .some(nil) }
                    state.waiter = continuation
                    return .none
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            giveUp(id)
        }
    }

    func close() {
        subscription.withLock { $0?.cancel() }
        end()
    }

    private func deliver(_ value: [UInt8]) {
        let waiter = state.withLock { state -> CheckedContinuation<[UInt8]?, Never>? in
            guard let waiter = state.waiter else {
                state.queued.append(value)
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: value)
    }

    private func end() {
        let waiter = state.withLock { state -> CheckedContinuation<[UInt8]?, Never>? in
            state.ended = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Ends wait `id` without a value (its deadline passed, or its task was cancelled).
    private func giveUp(_ id: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<[UInt8]?, Never>? in
            guard state.waiterID == id else { return nil }
            // A wait given up before it began finds the id moved on and returns at once.
            state.waiterID += 1
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }
}
