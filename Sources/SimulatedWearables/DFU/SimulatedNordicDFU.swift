import EventLoop
import Firmware
import Logging
import Wearables

/// The Nordic DFU of a simulated nRF5 device: the DFU service its application offers, the bootloader it reboots
/// into, and the firmware version that an update changes. A simulated peripheral (the GoFIT band) serves the
/// application half in its own GATT table and hands the bootloader to its host as a `SimulatedCompanion`.
///
/// - **Secure** (`dfu: secure`): the application has 0xFE59 with the buttonless characteristic 8EC90003 (write,
///   indicate). Writing `01` with indications on is indicated `20 01 01`; 300 ms later the device resets into its
///   bootloader (the application stops advertising and its link drops). A write without indications on is ATT 0xFD,
///   as the SDK's buttonless service answers; another opcode is indicated `20 op 02` (not supported; Set
///   Advertisement Name is not modeled). The bootloader advertises "DfuTarg" and 0xFE59 under the address + 1 and
///   runs `SecureDFUBootloaderEngine`.
/// - **Legacy** (`dfu: legacy`): the application has 0x1530 with control point 0x1531 (write, notify), packet
///   0x1532 and version 0x1534 answering 0x0001 (application). Start DFU (`01 mode`) with notifications on is
///   answered by the write response only, and the device resets into its bootloader 300 ms later; another request
///   is notified `10 op 03` (not supported), as `dfu_app_handler.c` does. The bootloader advertises "DfuTarg" and
///   0x1530, also under the address + 1 (*simplification*: a real Legacy bootloader keeps the application's
///   address; the gateway looks under both), answers version 0.8 and runs `LegacyDFUBootloaderEngine`. With
///   `dfu_legacy_bootloader: sdk6` the bootloader is older than SDK 7: DFU v1 only and no version characteristic.
/// - Bootloaders refuse control point writes without notifications on with ATT 0xFD (`is_cccd_configured` in the
///   SDK's transports).
///
/// The device stays in its bootloader across link drops and failed transfers (the SDK's inactivity timeout, which
/// would restart a bootloader into a valid application after two minutes, is not modeled). When the bootloader
/// resets — 300 ms after answering the last Execute or Activate, so that answer reaches the central first — the
/// application advertises again: with the new version (`SimulatedFirmwareRevision`) after an application install,
/// unchanged after a Legacy Reset or a bootloader image. An image that carries a SoftDevice leaves the application
/// invalid (*modeled* on the SDK, where the application must follow a new SoftDevice): the device restarts into its
/// bootloader again and waits for it.
public actor SimulatedNordicDFU {
    /// Which half of the device runs; also which half a central's request came through.
    public enum Mode: String, Sendable {
        case application
        case bootloader
    }

    /// From a request to reset until the other half is on the air: time for the answer to reach the central.
    static let restartDelay = Duration.milliseconds(300)

    public nonisolated let options: SimulatedDFUOptions
    /// The application's DFU service (empty for `dfu: none`), for the device's own GATT table.
    public nonisolated let applicationServices: [SimulatedService]

    private let label: String
    private let logger: Logger
    private let time: TimeSource
    private let radio: AsyncStream<SimulatedRadio>.Continuation
    public private(set) var firmware: String
    public private(set) var mode = Mode.application
    private var restarting = false
    private var engine: (any SimulatedDFUBootloaderEngine)?
    /// Faults not injected yet, while no engine holds them.
    private var faults: SimulatedDFUFaults
    private var bytesReceivedBefore = 0
    private var updates = 0
    private var subscriptions: [Mode: Set<BluetoothUUID>] = [:]
    private var connections: [Mode: Connection] = [:]
    /// What a write caused before its connection's delivery task started (the host starts it as the link comes up,
    /// but nothing orders that start before the first write).
    private var undelivered: [Mode: [SimulatedDFUOutgoing]] = [:]
    private var connectionCount = 0

    private struct Connection {
        let id: Int
        let outbox: AsyncStream<SimulatedDFUOutgoing>.Continuation
    }

    /// The DFU of a device whose firmware is `firmware`, and the bootloader its host serves as the companion (nil
    /// for `dfu: none`). `label` names the device in log lines (`gofit_care_xc CXC0000001`); `rssi` is the
    /// device's, which the bootloader shares (same radio); `time` counts the restart delays.
    public static func make(_ options: SimulatedDFUOptions, firmware: String, rssi: Int, label: String,
                            logger: Logger, time: TimeSource) -> (dfu: SimulatedNordicDFU, companion: SimulatedCompanion?) {
        let (stream, continuation) = AsyncStream.makeStream(of: SimulatedRadio.self)
        let dfu = SimulatedNordicDFU(options: options, firmware: firmware, label: label, logger: logger, time: time,
                                     radio: continuation)
        guard options.variant != .none else {
            continuation.finish()
            return (dfu, nil)
        }
        let bootloader = SimulatedDFUBootloader(dfu: dfu, options: options, rssi: rssi)
        let kind = options.variant == .legacy ? "legacy_dfu_bootloader" : "secure_dfu_bootloader"
        return (dfu, SimulatedCompanion(peripheral: bootloader, kind: kind, addressOffset: 1, radio: stream))
    }

    private init(options: SimulatedDFUOptions, firmware: String, label: String, logger: Logger, time: TimeSource,
                 radio: AsyncStream<SimulatedRadio>.Continuation) {
        self.options = options
        self.firmware = firmware
        self.label = label
        self.logger = logger
        self.time = time
        self.radio = radio
        faults = options.faults
        applicationServices = SimulatedDFUGATT.applicationServices(options.variant)
    }

    /// Whether `characteristic` belongs to the application's DFU service.
    public nonisolated func isApplicationCharacteristic(_ characteristic: BluetoothUUID) -> Bool {
        applicationServices.characteristic(characteristic) != nil
    }

    // MARK: Connections

    /// Delivers the answers of one connection to `half` until the link goes.
    public func run(_ half: Mode, on link: any PeripheralLink) async {
        let (outbox, continuation) = AsyncStream.makeStream(of: SimulatedDFUOutgoing.self)
        connectionCount += 1
        let id = connectionCount
        connections[half]?.outbox.finish()
        connections[half] = Connection(id: id, outbox: continuation)
        for item in undelivered.removeValue(forKey: half) ?? [] { continuation.yield(item) }
        await SimulatedDFUOutgoing.deliver(outbox, on: link)
        guard connections[half]?.id == id else { return }
        continuation.finish()
        connections[half] = nil
        if half == .bootloader, mode == .bootloader { engine?.linkDropped() }
    }

    public func subscriptionChanged(_ characteristic: BluetoothUUID, isSubscribed: Bool, in half: Mode) {
        if isSubscribed {
            subscriptions[half, default: []].insert(characteristic)
        } else {
            subscriptions[half]?.remove(characteristic)
        }
    }

    public func read(_ characteristic: BluetoothUUID, in half: Mode) throws(ATTError) -> [UInt8] {
        guard characteristic == SimulatedDFUGATT.legacyVersion, options.variant == .legacy else { throw .readNotPermitted }
        if half == .application { return SimulatedDFUGATT.applicationLegacyVersion.encoded() }
        let configuration = LegacyDFUBootloaderEngine.configuration(options.legacyBootloader)
        guard let value = engine?.versionValue ?? LegacyDFUTarget(configuration: configuration).versionValue else {
            throw .readNotPermitted
        }
        return value
    }

    /// A write through `half`'s GATT table. One that reaches a half that is no longer running (a write racing the
    /// reset) is dropped, as the chip that would have handled it is restarting.
    public func write(_ characteristic: BluetoothUUID, value: [UInt8], in half: Mode) throws(ATTError) {
        guard half == mode, !restarting else { return }
        switch half {
        case .application: try applicationWrite(characteristic, value)
        case .bootloader: try bootloaderWrite(characteristic, value)
        }
    }

    private func requireSubscription(_ characteristic: BluetoothUUID, in half: Mode) throws(ATTError) {
        guard subscriptions[half]?.contains(characteristic) ?? false else { throw .cccdImproperlyConfigured }
    }

    private func send(_ item: SimulatedDFUOutgoing, in half: Mode) {
        guard let connection = connections[half] else {
            undelivered[half, default: []].append(item)
            return
        }
        connection.outbox.yield(item)
    }

    // MARK: The application

    private func applicationWrite(_ characteristic: BluetoothUUID, _ value: [UInt8]) throws(ATTError) {
        switch (options.variant, characteristic) {
        case (.secure, SimulatedDFUGATT.buttonless):
            try requireSubscription(characteristic, in: .application)
            guard let opcode = value.first else { throw .invalidAttributeValueLength }
            guard opcode == SecureDFUButtonless.enterBootloaderOpcode else {
                send(.indicate(characteristic, SecureDFUButtonless.response(to: opcode, result: .opcodeNotSupported)),
                     in: .application)
                return
            }
            send(.indicate(characteristic, SecureDFUButtonless.response(to: opcode, result: .success)), in: .application)
            restart(into: .bootloader)
        case (.legacy, SimulatedDFUGATT.legacyControlPoint):
            try requireSubscription(characteristic, in: .application)
            guard case .start? = try? LegacyDFURequest(decoding: value) else {
                let answer = LegacyDFUNotification.response(requestOpcode: value.first ?? 0, status: .notSupported)
                send(.notify(characteristic, answer.encoded()), in: .application)
                return
            }
            restart(into: .bootloader)
        case (.legacy, SimulatedDFUGATT.legacyPacket):
            return
        default:
            throw .writeNotPermitted
        }
    }

    // MARK: The bootloader

    private func bootloaderWrite(_ characteristic: BluetoothUUID, _ value: [UInt8]) throws(ATTError) {
        guard var engine else { return }
        let outputs: [SimulatedDFUBootloaderOutput]
        switch characteristic {
        case SimulatedDFUGATT.controlPoint(options.variant):
            try requireSubscription(characteristic, in: .bootloader)
            outputs = engine.writeControlPoint(value)
        case SimulatedDFUGATT.packet(options.variant):
            outputs = engine.writePacket(value)
        default:
            throw .writeNotPermitted
        }
        self.engine = engine
        for output in outputs {
            switch output {
            case .notify(let bytes):
                // Answers and packet receipts alike go out on the control point.
                send(.notify(SimulatedDFUGATT.controlPoint(options.variant), bytes), in: .bootloader)
            case .dropLink:
                logger.info("\(label) drops the DFU link at \(engine.bytesReceived) image bytes received (dfu_drop_at)")
                send(.hangUp, in: .bootloader)
            case .reset(let installed):
                restart(into: installed?.containsSoftDevice == true ? .bootloader : .application, installing: installed)
            }
        }
    }

    // MARK: Resets

    /// The device restarts into `half` after `restartDelay`: the other half stops being on the air, `half` starts.
    private func restart(into half: Mode, installing installed: SimulatedDFUInstall? = nil) {
        guard !restarting else { return }
        restarting = true
        let time = time
        Task { [weak self] in
            try? await time.sleep(for: Self.restartDelay)
            await self?.restarted(into: half, installing: installed)
        }
    }

    private func restarted(into half: Mode, installing installed: SimulatedDFUInstall?) {
        restarting = false
        undelivered = [:]
        if let engine {
            faults = engine.faults
            bytesReceivedBefore += engine.bytesReceived
        }
        engine = nil
        if let installed {
            updates += 1
            if installed.isApplication {
                firmware = SimulatedFirmwareRevision.afterInstalling(version: installed.version, current: firmware,
                                                                     installCount: updates)
            }
            logger.info("\(label) installed a \(installed.imageSize)-byte \(installed.isApplication ? "application" : "system") image")
        }
        if half == .bootloader {
            // From the bootloader into the bootloader (after a SoftDevice): the reset drops the link all the same.
            if mode == .bootloader, connections[.bootloader] != nil { send(.hangUp, in: .bootloader) }
            engine = options.variant == .legacy
                ? LegacyDFUBootloaderEngine(faults: faults, bootloader: options.legacyBootloader)
                : SecureDFUBootloaderEngine(faults: faults)
            logger.info("\(label) restarts into its \(options.variant.rawValue) DFU bootloader")
        } else {
            logger.info("\(label) restarts into its application (firmware \(firmware))")
        }
        mode = half
        radio.yield(half == .bootloader ? .companion : .primary)
    }

    // MARK: Inspection

    /// `dfu` (secure, legacy or none), `dfu_mode` (application or bootloader), `firmware` (the Firmware Revision
    /// now), `dfu_bytes_received` (image bytes every bootloader stay received over the air, resent ones again),
    /// `dfu_updates` (images installed), `dfu_injected_drops`, `dfu_injected_rejections`, `dfu_injected_busy_executes`
    /// and `dfu_injected_corruptions` (faults fired).
    public func inspect() -> [String: String] {
        let remaining = engine?.faults ?? faults
        return [
            "dfu": options.variant.rawValue,
            "dfu_mode": mode.rawValue,
            "firmware": firmware,
            "dfu_bytes_received": String(bytesReceivedBefore + (engine?.bytesReceived ?? 0)),
            "dfu_updates": String(updates),
            "dfu_injected_drops": options.faults.dropAt != nil && remaining.dropAt == nil ? "1" : "0",
            "dfu_injected_rejections": options.faults.reject != nil && remaining.reject == nil ? "1" : "0",
            "dfu_injected_busy_executes": options.faults.executeBusy && !remaining.executeBusy ? "1" : "0",
            "dfu_injected_corruptions": String(options.faults.corruptObjects - remaining.corruptObjects),
        ]
    }
}
