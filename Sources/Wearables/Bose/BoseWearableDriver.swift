import BlueZ
import EventLoop
import Logging
import Synchronization

/// The driver for Bose Wearable devices (Bose Frames, QC35 II, NC 700): the documented sensor service 0xFDD2.
///
/// On every connection it reads the device, sensor and gesture information (needed to frame and scale sensor
/// records), publishes the capabilities, and writes the configuration it holds: the device starts with
/// everything off after each connection, so the driver — which lives as long as the gateway — re-applies what
/// `request/configure` (or `devices[].configure` in config.yaml) asked for. A configuration is answered only
/// once the device notifies it back, as the SDK's `didUpdateSensorConfiguration` does.
public final class BoseWearableDriver: WearableDriver {

    /// 0xFDD2 is assigned to Bose by the Bluetooth SIG: a device advertising it is one of theirs.
    public static func match(_ device: Advertisement) -> DriverMatch? {
        device.serviceUUIDs.contains { $0.lowercased() == BoseUUID.service } ? .certain : nil
    }

    /// What holds for one connection; reset when the next one starts.
    private struct Connection {
        var capabilities: BoseCapabilities?
        var clock = BoseTimestampClock()
        /// The configurations the device last reported (read or notified).
        var sensors: BoseSensorConfiguration?
        var gestures: BoseGestureConfiguration?
    }

    private let desired = Mutex(BoseDesiredConfiguration.none)
    /// `devices[].configure` from the configuration file, checked against the device on the first connection.
    private let initialRequest: Mutex<[String: DeviceValue]?>
    private let connection = Mutex(Connection())
    /// Subscribed and the held configuration written: commands may configure now.
    private let ready = ConnectionReadiness()
    private let sensorConfirmations = NotificationWaiters<BoseSensorConfiguration>()
    private let gestureConfirmations = NotificationWaiters<BoseGestureConfiguration>()
    /// Configuration writes, one at a time in the order asked for: a command's and the re-application after a
    /// resume must not interleave their writes and confirmations.
    private let configurationWrites = OrderedWorkQueue()
    /// How long the device has to notify a configuration it accepted.
    let confirmationTimeout: Duration

    public init(configuration: DriverConfiguration) {
        initialRequest = Mutex(configuration.configure.isEmpty ? nil : configuration.configure)
        confirmationTimeout = .seconds(5)
    }

    // MARK: Session

    public func session(_ link: DeviceLink) async throws {
        connection.withLock { $0 = Connection() }
        ready.reset()
        let capabilities = try await readCapabilities(link)
        var state = capabilities.stateFields
        state.merge(await link.readDeviceInformationStrings()) { $1 }
        link.emit(.state(state))

        // Subscribe before writing anything, so the confirmation of the first write is not missed.
        let handlers: [(String, @Sendable ([UInt8], DeviceLink) -> Void)] = [
            (BoseUUID.sensorData, sensorData), (BoseUUID.gestureData, gestureData),
            (BoseUUID.sensorConfiguration, sensorConfiguration), (BoseUUID.gestureConfiguration, gestureConfiguration),
            (BoseUUID.deviceInformation, deviceInformation),
        ]
        var notifications: [NotificationHandler] = []
        for (uuid, handler) in handlers {
            let characteristic = try Self.characteristic(uuid, link)
            notifications.append(NotificationHandler(characteristic) { handler($0, link) })
        }
        try await link.runSession(notifications) { [self] in
            await readConfigurations(link)
            await applyDesiredConfiguration(link, reason: "connected")
        }
    }

    private static func characteristic(_ uuid: String, _ link: DeviceLink) throws(CommandError) -> GattCharacteristicInfo {
        guard let characteristic = link.characteristic(service: BoseUUID.service, uuid) else {
            throw CommandError(.notSupported, "the device's sensor service 0xFDD2 lacks characteristic \(uuid)")
        }
        return characteristic
    }

    private func readCapabilities(_ link: DeviceLink) async throws -> BoseCapabilities {
        let device = try BoseDeviceInformation.decode(await link.read(Self.characteristic(BoseUUID.deviceInformation, link)))
        let sensors = try BoseSensorInformation.decode(await link.read(Self.characteristic(BoseUUID.sensorInformation, link)))
        if !sensors.ignored.isEmpty {
            link.logger.debug("parts of the sensor information ignored, as the SDK ignores them",
                              metadata: ["ignored": "\(sensors.ignored)"])
        }
        let gestures = try BoseGestureInformation.decode(await link.read(Self.characteristic(BoseUUID.gestureInformation, link)))
        let capabilities = BoseCapabilities(device: device, sensorInformation: sensors, gestureInformation: gestures)
        connection.withLock { $0.capabilities = capabilities }
        if let request = initialRequest.withLock({ $0 }) {
            initialRequest.withLock { $0 = nil }
            do throws(CommandError) {
                let configured = try desired.withLock { $0 }.applying(request, to: capabilities)
                desired.withLock { $0 = configured }
            } catch {
                link.logger.error("the configured sensors and gestures do not fit this device; none applied",
                                  metadata: ["error": "\(error.message)"])
                link.emit(.event(name: "configuration_failed", timestamp: link.now,
                                 details: ["code": .text(error.code.rawValue), "message": .text(error.message)]))
            }
        }
        return capabilities
    }

    /// The configurations as the device holds them now (all off after a connection, unless it kept them).
    private func readConfigurations(_ link: DeviceLink) async {
        if let characteristic = try? Self.characteristic(BoseUUID.sensorConfiguration, link),
           let bytes = try? await link.read(characteristic) {
            sensorConfiguration(bytes, link)
        }
        if let characteristic = try? Self.characteristic(BoseUUID.gestureConfiguration, link),
           let bytes = try? await link.read(characteristic) {
            gestureConfiguration(bytes, link)
        }
    }

    /// Writes the configuration the gateway holds, and returns once it is written (or failed).
    private func applyDesiredConfiguration(_ link: DeviceLink, reason: String) async {
        guard let capabilities = connection.withLock({ $0.capabilities }) else { return }
        await configurationWrites.run { [self] in await reapplyInTurn(capabilities, link, reason: reason) }
    }

    /// In `configurationWrites`, so the configuration is read when its turn comes (a command queued before has
    /// already updated it). A failure is reported as the `configuration_failed` event.
    private func reapplyInTurn(_ capabilities: BoseCapabilities, _ link: DeviceLink, reason: String) async {
        var failure: CommandError?
        do throws(CommandError) {
            try await write(desired.withLock { $0 }, capabilities, link)
        } catch {
            failure = error
        }
        if reason == "connected" { ready.markReady() }
        if let failure {
            link.logger.warning("could not re-apply the sensor and gesture configuration",
                                metadata: ["reason": "\(reason)", "error": "\(failure)"])
            link.emit(.event(name: "configuration_failed", timestamp: link.now,
                             details: ["code": .text(failure.code.rawValue), "message": .text(failure.message)]))
        }
    }

    // MARK: Notifications

    private func decodeFailed(_ what: String, _ bytes: [UInt8], _ error: any Error, _ link: DeviceLink) {
        link.logger.debug("malformed \(what) notification dropped", metadata: ["bytes": "\(bytes)", "error": "\(error)"])
    }

    /// The records before one that cannot be framed are published (as the SDK's parser keeps them); the rest of
    /// that notification is dropped and reported like a malformed notification.
    @Sendable private func sensorData(_ bytes: [UInt8], _ link: DeviceLink) {
        guard let information = connection.withLock({ $0.capabilities?.sensorInformation }) else { return }
        let decoded = BoseSensorData.decodeRecords(bytes, information: information)
        let records = decoded.records
        let now = link.now
        let times = connection.withLock { state in records.map { state.clock.unixMilliseconds(for: $0.timestamp, now: now) } }
        for (record, time) in zip(records, times) {
            guard let entry = information.entry(for: record.sensor) else { continue }
            link.emit(.sample(SensorSample(sensor: record.sensor.kind, timestamp: time, reading: record.reading(scaledWith: entry))))
        }
        if let problem = decoded.problem {
            link.logger.debug("malformed sensor data notification: the records before the unframeable one kept, the rest dropped",
                              metadata: ["bytes": "\(bytes)", "error": "\(problem)", "records_kept": "\(records.count)"])
        }
    }

    @Sendable private func gestureData(_ bytes: [UInt8], _ link: DeviceLink) {
        do {
            let events = try BoseGestureEvent.decode(bytes)
            let now = link.now
            let times = connection.withLock { state in events.map { state.clock.unixMilliseconds(for: $0.timestamp, now: now) } }
            for (event, time) in zip(events, times) { link.emit(.gesture(name: event.gesture.name, timestamp: time)) }
        } catch { decodeFailed("gesture data", bytes, error, link) }
    }

    @Sendable private func sensorConfiguration(_ bytes: [UInt8], _ link: DeviceLink) {
        do {
            let configuration = try BoseSensorConfiguration.decode(bytes)
            connection.withLock { $0.sensors = configuration }
            link.emit(.state(["sensors": .object(configuration.stateFields), "sensor_period_ms": sharedPeriodState(configuration)]))
            sensorConfirmations.deliver(configuration)
        } catch { decodeFailed("sensor configuration", bytes, error, link) }
    }

    /// Framed by the gesture information read at connection time, as the SDK frames it (which, like this, drops a
    /// configuration that arrives before that information).
    @Sendable private func gestureConfiguration(_ bytes: [UInt8], _ link: DeviceLink) {
        guard let information = connection.withLock({ $0.capabilities?.gestureInformation }) else { return }
        do {
            let configuration = try BoseGestureConfiguration.decode(bytes, information: information)
            connection.withLock { $0.gestures = configuration }
            link.emit(.state(["gestures": .object(configuration.stateFields)]))
            gestureConfirmations.deliver(configuration)
        } catch { decodeFailed("gesture configuration", bytes, error, link) }
    }

    /// The device status changed (the SDK's `didSuspendWearableSensorService` / `didResumeWearableSensorService`).
    @Sendable private func deviceInformation(_ bytes: [UInt8], _ link: DeviceLink) {
        do {
            let information = try BoseDeviceInformation.decode(bytes)
            let wasSuspended = connection.withLock { state -> Bool? in
                let before = state.capabilities?.device.status.contains(.sensorServiceSuspended)
                state.capabilities?.device = information
                return before
            }
            link.emit(.state(["device_status": .object(information.status.fields)]))
            let suspended = information.status.contains(.sensorServiceSuspended)
            guard let wasSuspended, wasSuspended != suspended else { return }
            link.emit(.event(name: suspended ? "sensor_service_suspended" : "sensor_service_resumed",
                             timestamp: link.now, details: [:]))
            // Queued now, from the notification handler (on the loop thread), behind the writes already asked for.
            if !suspended, let capabilities = connection.withLock({ $0.capabilities }) {
                configurationWrites.enqueue { [self] in await reapplyInTurn(capabilities, link, reason: "sensor service resumed") }
            }
        } catch { decodeFailed("device information", bytes, error, link) }
    }

    /// The state's `sensor_period_ms`: the period the device's enabled sensors run at, else the one a request
    /// chose for the next sensor switched on; null when neither is known.
    private func sharedPeriodState(_ reported: BoseSensorConfiguration?) -> DeviceValue {
        let running = reported?.entries.first { $0.periodMilliseconds != 0 && BoseSensor(rawValue: $0.sensorID) != nil }?.periodMilliseconds
        return (running ?? desired.withLock { $0.chosenPeriod }).map { .integer(Int64($0)) } ?? .null
    }

    // MARK: Writing a configuration

    /// Writes whichever of the two configurations differs from what the device holds, each followed by the
    /// device's notification of it.
    private func write(_ wanted: BoseDesiredConfiguration, _ capabilities: BoseCapabilities, _ link: DeviceLink) async throws(CommandError) {
        let sensors = capabilities.sensorConfiguration(wanted.sensorPeriods)
        if connection.withLock({ $0.sensors.map { !$0.hasSameSettings(as: sensors) } ?? true }) {
            try await write(sensors.encode(), to: BoseUUID.sensorConfiguration, what: "sensor configuration",
                            waiters: sensorConfirmations, matches: { $0.hasSameSettings(as: sensors) }, link)
        }
        let gestures = capabilities.gestureConfiguration(wanted.gestures)
        if connection.withLock({ $0.gestures.map { !$0.hasSameSettings(as: gestures) } ?? true }) {
            try await write(gestures.encode(), to: BoseUUID.gestureConfiguration, what: "gesture configuration",
                            waiters: gestureConfirmations, matches: { $0.hasSameSettings(as: gestures) }, link)
        }
    }

    private func write<Value: Sendable>(_ bytes: [UInt8], to uuid: String, what: String, waiters: NotificationWaiters<Value>,
                                        matches: @escaping @Sendable (Value) -> Bool, _ link: DeviceLink) async throws(CommandError) {
        let characteristic = try Self.characteristic(uuid, link)
        let outcome = try await waiters.wait(timeout: confirmationTimeout, on: link.time, matches: matches) { () async throws(CommandError) in
            try await link.write(characteristic, bytes, withResponse: true) { code in
                CommandError(.invalidValue, "the device rejected the \(what) (ATT error 0x\(String(code, radix: 16)))",
                             vendorCode: Int(code))
            }
        }
        switch outcome {
        case .confirmed:
            return
        case .differs(let reported):
            throw CommandError(.invalidValue, "the device accepted the \(what) but reports another one: \(reported)")
        case .silent:
            throw CommandError(.timeout, "the device accepted the \(what) but did not confirm it within \(confirmationTimeout)")
        }
    }

    // MARK: Commands

    /// The capabilities once the session has subscribed and written the held configuration; a command that
    /// arrives in the second after a connection waits for that rather than racing it.
    private func readyCapabilities(_ time: TimeSource) async throws(CommandError) -> BoseCapabilities {
        if await ready.wait(upTo: .seconds(10), on: time), let capabilities = connection.withLock({ $0.capabilities }) {
            return capabilities
        }
        throw CommandError(.busy, "the device's session is still starting; try again in a moment")
    }

    public func execute(_ command: DeviceCommand, link: DeviceLink) async throws(CommandError) -> DeviceValue {
        switch command {
        case .configure(let request):
            let capabilities = try await readyCapabilities(link.time)
            // Checked and written in its turn, against the configuration as it is when the turn comes.
            let outcome = await configurationWrites.run { [self] () async -> Result<BoseDesiredConfiguration, CommandError> in
                do throws(CommandError) {
                    let next = try desired.withLock { $0 }.applying(request, to: capabilities)
                    try await write(next, capabilities, link)
                    desired.withLock { $0 = next }
                    link.emit(.state(["sensor_period_ms": sharedPeriodState(connection.withLock { $0.sensors })]))
                    return .success(next)
                } catch {
                    return .failure(error)
                }
            }
            return .object(try outcome.get().requestForm(for: capabilities))
        case .refresh:
            do {
                var state = try await readCapabilities(link).stateFields
                state.merge(await link.readDeviceInformationStrings()) { $1 }
                link.emit(.state(state))
            } catch let error as CommandError {
                throw error
            } catch {
                throw CommandError(.internalError, "the device's information could not be decoded: \(error)")
            }
            await readConfigurations(link)
            return .object([:])
        default:
            throw CommandError(.notSupported, "\(command.name) is not supported by Bose Wearable devices")
        }
    }
}

extension BoseSensorConfiguration {
    /// Same periods for the same sensors, whatever the order of the entries.
    func hasSameSettings(as other: BoseSensorConfiguration) -> Bool {
        Dictionary(entries.map { ($0.sensorID, $0.periodMilliseconds) }) { $1 }
            == Dictionary(other.entries.map { ($0.sensorID, $0.periodMilliseconds) }) { $1 }
    }
}

extension BoseGestureConfiguration {
    func hasSameSettings(as other: BoseGestureConfiguration) -> Bool {
        Dictionary(entries.map { ($0.gestureID, $0.isEnabled) }) { $1 }
            == Dictionary(other.entries.map { ($0.gestureID, $0.isEnabled) }) { $1 }
    }
}
