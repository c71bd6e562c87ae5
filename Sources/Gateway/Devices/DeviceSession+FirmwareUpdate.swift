import BlueZ
import DBus
import FoundationEssentials
import Synchronization
import Wearables
import Firmware

/// A firmware package the gateway has checked (confined to `dfu.dir`, size, SHA-256, parsed) and the file it
/// came from; what a device session sends, now or when the device next connects.
public struct FirmwareUpdateOrder: Sendable {
    public var file: String
    public var sha256: String
    public var package: DFUPackage

    /// Reads the package `file` names under `section.directory`, checked before anything reaches a device:
    /// confined to the directory, a regular file, at most `max_mb`, exactly `sha256`, a readable Nordic DFU zip.
    /// The file is read on a thread of its own within `FileAccessOffLoop.limit`. Any failure is `INVALID_VALUE`,
    /// a read past the limit `TIMEOUT`, `BUSY` when earlier reads are still blocked.
    public static func load(file: String, sha256: String, from section: Configuration.DFUSection) async throws(CommandError) -> FirmwareUpdateOrder {
        let directory = section.directory, maximumSize = section.maxBytes
        let loaded = await FileAccessOffLoop.run { () -> Result<DFUPackage, DFUPackageError> in
            Result { () throws(DFUPackageError) in
                try DFUPackageFile.load(name: file, directory: directory, expectedSHA256: sha256, maximumSize: maximumSize)
            }
        }
        switch loaded {
        case .success(.success(let package)):
            return FirmwareUpdateOrder(file: file, sha256: sha256, package: package)
        case .success(.failure(let error)):
            throw CommandError(.invalidValue, "file: \(error.message); nothing was sent to the device")
        case .failure(.timedOut(let limit)):
            throw CommandError(.timeout, "file: reading it took longer than \(limit); nothing was sent to the device")
        case .failure(.busy):
            throw CommandError(.busy, "file: earlier reads of the DFU directory are still blocked; nothing was sent to the device")
        }
    }

    public init(file: String, sha256: String, package: DFUPackage) {
        self.file = file
        self.sha256 = sha256
        self.package = package
    }
}

/// The update of one device: waiting for it to come back, or under way.
enum FirmwareUpdateJob {
    case scheduled(FirmwareUpdateOrder)
    case running(FirmwareUpdateOrder, Task<Result<DeviceValue, CommandError>, Never>)
}

/// Firmware updates (`request/dfu`, issue 10). An update is not a queued command: it outlives the connection it
/// starts on (the application reboots into its bootloader, another device on the bus, then comes back), it can
/// wait for a device that is away, and `dfu/cancel` must reach it while it runs. The pure protocol is in
/// `Wearables/DFU`; this is the choreography across connections.
extension DeviceSession {
    /// How many connections to the bootloader may end without the bootloader confirming a single new byte
    /// before the update is given up.
    static let bootloaderAttemptsWithoutProgress = 3
    /// How long the bootloader may take to show up after the application agreed to reboot into it.
    static let bootloaderAppearance = Duration.seconds(30)
    /// How long the application may take to come back after the bootloader installed the image.
    static let applicationReturn = Duration.seconds(60)

    /// Starts the update when the device is connected (or waits in the bootloader an earlier update left it in)
    /// and answers when it is over; otherwise schedules it and answers at once with `{"update":"scheduled"}`.
    /// `BUSY` while another update runs or waits.
    public func updateFirmware(_ order: FirmwareUpdateOrder) async throws(CommandError) -> DeviceValue {
        var decision = lifecycle
        switch decision.updateRequested().first {
        case .refuseUpdate(let scheduled):
            throw CommandError(.busy, "a firmware update of \(device.id) \(scheduled ? "is scheduled" : "is running"); "
                               + "cancel it with request/dfu/cancel first")
        case .scheduleUpdate:
            try storage.save(Self.scheduledUpdateEntry, ["file": .text(order.file), "sha256": .text(order.sha256)])
            lifecycle = decision
            updateJob = .scheduled(order)
            emitUpdate(.progress(key: "update", OperationProgress(state: "scheduled")))
            logger.info("firmware update scheduled for the next connection", metadata: ["device": "\(device.id)", "file": "\(order.file)"])
            // A link on demand is wanted now for it.
            if visits != nil { wakes.signal() }
            return .object(["update": .text("scheduled"), "file": .text(order.file)])
        default:
            lifecycle = decision
            return try await startUpdate(order).value.get()
        }
    }

    /// Stops a running update (the bootloader keeps what it has; the next update resumes or restarts it) or drops
    /// a scheduled one. `{"cancelled":false}` when there was none.
    public func cancelFirmwareUpdate() -> DeviceValue {
        let action = lifecycle.cancelRequested().first
        switch (action, updateJob) {
        case (.forgetScheduledUpdate?, .scheduled(let order)?):
            updateJob = nil
            forgetScheduledUpdate()
            emitUpdate(.state(["update": .object(["state": .text("idle"), "progress": .null, "remaining_s": .null])]))
            return .object(["cancelled": .flag(true), "was": .text("scheduled"), "file": .text(order.file)])
        case (.cancelUpdate?, .running(let order, let task)?):
            task.cancel()
            return .object(["cancelled": .flag(true), "was": .text("updating"), "file": .text(order.file)])
        default:
            return .object(["cancelled": .flag(false)])
        }
    }

    /// The `DriverStorage` entry of a scheduled update: `{"file","sha256"}`, so it survives a gateway restart.
    static let scheduledUpdateEntry = "firmware_update"

    /// Takes up an update scheduled before the gateway restarted. The package is checked again (it may have
    /// changed or gone since); one that fails is dropped with its error in the state.
    func restoreScheduledUpdate() async {
        guard let entry = storage.load(Self.scheduledUpdateEntry) else { return }
        guard let file = entry["file"]?.text, let sha256 = entry["sha256"]?.text else {
            forgetScheduledUpdate()
            return
        }
        do throws(CommandError) {
            let order = try await FirmwareUpdateOrder.load(file: file, sha256: sha256, from: firmwarePackages)
            updateJob = .scheduled(order)
            lifecycle.scheduledUpdateRestored()
            emitUpdate(.state(["update": .object(["state": .text("scheduled"), "file": .text(file)])]))
            logger.info("firmware update still scheduled from before the restart", metadata: ["device": "\(device.id)", "file": "\(file)"])
        } catch {
            forgetScheduledUpdate()
            emitUpdate(.state(["update": .object(["state": .text("idle"), "error": .object([
                "code": .text(error.code.rawValue), "message": .text("the scheduled update was dropped: \(error.message)"),
            ])])]))
            logger.warning("scheduled firmware update dropped", metadata: ["device": "\(device.id)", "error": "\(error)"])
        }
    }

    /// The `DriverStorage` entry saying an update left the device in its bootloader (`{}`), so that a gateway
    /// killed mid-update sends the next update there instead of waiting for an application that is not on the air.
    static let bootloaderEntry = "firmware_bootloader"

    func restoreBootloader() {
        guard storage.load(Self.bootloaderEntry) != nil else { return }
        lifecycle.bootloaderRestored()
        logger.info("the device was left in its bootloader by an update before the restart; the next update goes there",
                    metadata: ["device": "\(device.id)"])
    }

    /// Best effort: the flag only spares a wait, so a state folder that cannot take it is logged, not fatal.
    func rememberBootloader(_ inBootloader: Bool) {
        do throws(CommandError) {
            if inBootloader {
                try storage.save(Self.bootloaderEntry, [:])
            } else if storage.load(Self.bootloaderEntry) != nil {
                try storage.remove(Self.bootloaderEntry)
            }
        } catch {
            logger.warning("cannot record whether the device is in its bootloader", metadata: ["device": "\(device.id)", "error": "\(error)"])
        }
    }

    func forgetScheduledUpdate() {
        do throws(CommandError) { try storage.remove(Self.scheduledUpdateEntry) } catch {
            logger.warning("cannot forget the scheduled firmware update", metadata: ["device": "\(device.id)", "error": "\(error)"])
        }
    }

    @discardableResult
    func startUpdate(_ order: FirmwareUpdateOrder) -> Task<Result<DeviceValue, CommandError>, Never> {
        forgetScheduledUpdate()
        // Unstructured: an update outlives the request that starts it (scheduled, resumed); `stop` cancels it.
        let task = Task { await self.performUpdate(order) }
        updateJob = .running(order, task)
        return task
    }

    private func emitUpdate(_ event: WearableEvent) { output(.event(event)) }

    private func performUpdate(_ order: FirmwareUpdateOrder) async -> Result<DeviceValue, CommandError> {
        let started = time.now
        let images = order.package.images
        let meter = SharedProgressMeter(DFUProgressMeter(totalBytes: images.reduce(0) { $0 + $1.firmware.count }))
        emitUpdate(.progress(key: "update", meter.withLock { $0.report(at: started) }))
        logger.info("firmware update starts", metadata: ["device": "\(device.id)", "file": "\(order.file)"])
        let result: Result<DeviceValue, CommandError>
        do throws(CommandError) {
            try await install(images, meter: meter)
            rememberBootloader(false)
            apply(lifecycle.updateReleasesDevice(installed: true))
            let firmware = await firmwareAfterUpdate()
            let seconds = Self.seconds(time.now - started)
            var finished: [String: DeviceValue] = [
                "state": .text("idle"), "progress": .null, "remaining_s": .null, "error": .null,
                "firmware": firmware.map(DeviceValue.text) ?? .null,
            ]
            var answer: [String: DeviceValue] = [
                "file": .text(order.file), "bytes": .integer(Int64(meter.withLock { $0.totalBytes })),
                "seconds": .number(seconds), "firmware": firmware.map(DeviceValue.text) ?? .null,
            ]
            if firmware == nil {
                let note = "the device did not come back within \(Self.applicationReturn) to report its firmware"
                finished["note"] = .text(note)
                answer["note"] = .text(note)
            }
            if let after = type(of: driver).firmwareUpdateNote {
                answer["next_step"] = .text(after)
                finished["next_step"] = .text(after)
            }
            var patch: [String: DeviceValue] = ["update": .object(finished)]
            if let firmware { patch["firmware"] = .text(firmware) }
            emitUpdate(.state(patch))
            logger.info("firmware update done", metadata: ["device": "\(device.id)", "firmware": "\(firmware ?? "?")",
                                                          "seconds": "\(seconds)"])
            result = .success(.object(answer))
        } catch {
            apply(lifecycle.updateReleasesDevice(installed: false))
            var failure: [String: DeviceValue] = ["code": .text(error.code.rawValue), "message": .text(error.message)]
            if let vendorCode = error.vendorCode { failure["vendor_code"] = .integer(Int64(vendorCode)) }
            emitUpdate(.state(["update": .object(["state": .text("idle"), "progress": .null, "remaining_s": .null,
                                                  "error": .object(failure)])]))
            logger.warning("firmware update failed", metadata: ["device": "\(device.id)", "error": "\(error)"])
            result = .failure(error)
        }
        updateJob = nil
        lifecycle.updateEnded()
        return result
    }

    /// Gets every image of the package into the device: into its bootloader first if it runs its application,
    /// then one image after the other, reconnecting to the bootloader after each reset and each lost link.
    private func install(_ images: [DFUImage], meter: SharedProgressMeter) async throws(CommandError) {
        // The unbonded Secure DFU bootloader advertises under the next address; a Legacy one usually under the
        // same (docs/protocols/dfu.md).
        let bootloaderCandidates = [BluetoothAddress(SecureDFUBootloaderAddress.after(address.rawValue) ?? ""), address]
            .compactMap { $0 }
        var candidates = [address]
        var bootloaderLink: DeviceLink?
        if let applicationLink = link, state == .connected {
            guard let mode = await NordicDFUMode.of(applicationLink) else {
                throw CommandError(.notSupported, "\(device.id) offers no Nordic DFU (Secure DFU 0xFE59 or Legacy DFU "
                                   + "\(LegacyDFUUUID.service))")
            }
            // A package the device's protocol cannot take is refused before the device reboots for it.
            try NordicDFUTransfer.checkSendable(images, mode: mode)
            lifecycle.updateHoldsDevice()
            if mode.isBootloader {
                bootloaderLink = applicationLink
            } else {
                try await NordicDFUTransfer.enterBootloader(mode, link: applicationLink)
                lifecycle.enteredBootloader()
                rememberBootloader(true)
                await waitForDisconnection(applicationLink, upTo: .seconds(10))
                candidates = bootloaderCandidates
            }
        } else if lifecycle.inBootloader {
            lifecycle.updateHoldsDevice()
            candidates = bootloaderCandidates
        } else {
            throw CommandError(.deviceDisconnected, "\(device.id) went away before the update could start")
        }
        for image in images {
            var attemptsWithoutProgress = 0
            var confirmedBefore = meter.withLock { $0.confirmedBytes }
            while true {
                if Task.isCancelled { throw Self.cancelled }
                let link: DeviceLink
                if let bootloaderLink, bootloaderLink.isConnected {
                    link = bootloaderLink
                } else {
                    do throws(CommandError) {
                        link = try await connectBootloader(candidates)
                    } catch where error.code != .adapterUnavailable && !Task.isCancelled {
                        attemptsWithoutProgress += 1
                        guard attemptsWithoutProgress < Self.bootloaderAttemptsWithoutProgress else {
                            throw CommandError(.dfuFailed, "the bootloader cannot be reached: \(error.message)")
                        }
                        continue
                    }
                }
                bootloaderLink = link
                guard let bootloaderMode = await NordicDFUMode.of(link), bootloaderMode.isBootloader else {
                    try? await bluez.disconnect(link.device)
                    throw CommandError(.dfuFailed, "the device at \(link.address) offers no DFU bootloader")
                }
                let output = output, time = time
                let installed: Bool
                do throws(CommandError) {
                    installed = try await NordicDFUTransfer.send(image, mode: bootloaderMode, link: link) { progress in
                        if let report = meter.withLock({ $0.update(progress, at: time.now) }) {
                            output(.event(.progress(key: "update", report)))
                        }
                    }
                } catch {
                    // Refused or cancelled: leave the bootloader as a DFU app does, so the next update starts afresh.
                    if link.isConnected { try? await bluez.disconnect(link.device) }
                    throw error
                }
                if Task.isCancelled { throw Self.cancelled }
                if installed {
                    meter.withLock { $0.imageCompleted(size: image.firmware.count) }
                    // The bootloader resets into the image (or into itself, for the next one).
                    await waitForDisconnection(link, upTo: .seconds(10))
                    bootloaderLink = nil
                    break
                }
                meter.withLock { $0.linkLost() }
                let confirmed = meter.withLock { $0.confirmedBytes }
                if confirmed > confirmedBefore {
                    attemptsWithoutProgress = 0
                    confirmedBefore = confirmed
                } else {
                    attemptsWithoutProgress += 1
                }
                logger.info("lost the bootloader mid-transfer; reconnecting",
                            metadata: ["device": "\(device.id)", "confirmed_bytes": "\(confirmed)"])
                if link.isConnected { try? await bluez.disconnect(link.device) }
                bootloaderLink = nil
                guard attemptsWithoutProgress < Self.bootloaderAttemptsWithoutProgress else {
                    throw CommandError(.dfuFailed, "the bootloader dropped or went silent \(attemptsWithoutProgress) "
                                       + "times without taking more of the image")
                }
            }
        }
    }

    /// Finds the bootloader among `candidates` (the first that BlueZ sees; the application's own address only
    /// after a while, as BlueZ already knows it) and connects to it.
    private func connectBootloader(_ candidates: [BluetoothAddress]) async throws(CommandError) -> DeviceLink {
        guard let adapter = adapter(), adapter.powered else {
            throw CommandError(.adapterUnavailable, "no powered adapter to reach the bootloader with")
        }
        let lease = await discovery.acquire(adapter: adapter.path)
        let own = address
        let others = candidates.filter { $0 != own }
        let adapterPath = adapter.path
        let seen = { @Sendable (addresses: [BluetoothAddress], model: BlueZModel) -> DeviceInfo? in
            addresses.lazy.compactMap { model.device(address: $0, adapter: adapterPath) }.first
        }
        // The bootloader's own address first, for a while: BlueZ already knows the application's, which may be the
        // bootloader too (Legacy DFU), or may be nothing but a stale object.
        let preferOthers = Duration.seconds(10)
        _ = await bluez.wait(timeout: preferOthers) { seen(others, $0) != nil }
        var found = seen(others, bluez.model)
        if found == nil, !Task.isCancelled {
            _ = await bluez.wait(timeout: Self.bootloaderAppearance - preferOthers) { seen(candidates, $0) != nil }
            found = seen(candidates, bluez.model)
        }
        await discovery.release(lease)
        if Task.isCancelled { throw Self.cancelled }
        guard let found else {
            let names = candidates.map(\.rawValue).joined(separator: " or ")
            throw CommandError(.dfuFailed, "no bootloader appeared at \(names) within \(Self.bootloaderAppearance)")
        }
        do { try await bluez.connect(found.path, timeout: .seconds(20)) } catch { throw CommandError(bluez: error) }
        return DeviceLink(central: bluez, device: found.path, address: found.address ?? own,
                          notifyMethod: device.options.notify == "start_notify" ? .startNotify : .acquire,
                          logger: logger, emit: { _ in }, time: time)
    }

    /// The application's Firmware Revision once it is back and connected; nil if it does not come back in time.
    private func firmwareAfterUpdate() async -> String? {
        let deadline = time.now + Self.applicationReturn
        while time.now < deadline, !Task.isCancelled {
            // `link.isConnected` too: a device whose application took the update itself (InfiniTime) reset on the
            // session's own link, which the session may not have seen drop yet.
            if state == .connected, let link, link.isConnected {
                if let firmware = await link.readDeviceInformationStrings()["firmware"]?.text { return firmware }
                return nil
            }
            await linkUp.wait(until: deadline)
        }
        return nil
    }

    private func waitForDisconnection(_ link: DeviceLink, upTo limit: Duration) async {
        let device = link.device
        let bluez = bluez
        let gone = await bluez.wait(timeout: limit) { !($0.devices[device]?.connected ?? false) }
        if !gone { try? await bluez.disconnect(device) }
    }

    private static let cancelled = CommandError(.dfuFailed, "the update was cancelled (request/dfu/cancel)")

    private static func seconds(_ duration: Duration) -> Double {
        let value = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return (value * 10).rounded() / 10
    }
}

/// The progress meter of one update, shared with the transfer's progress callback.
final class SharedProgressMeter: Sendable {
    private let meter: Mutex<DFUProgressMeter>

    init(_ meter: DFUProgressMeter) { self.meter = Mutex(meter) }

    func withLock<T>(_ body: (inout DFUProgressMeter) -> T) -> T { meter.withLock { body(&$0) } }
}
