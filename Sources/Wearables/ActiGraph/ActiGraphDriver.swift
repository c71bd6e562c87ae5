import BlueZ
import FoundationEssentials
import Synchronization

/// The driver for ActiGraph Link (GT9X) devices: standard Battery, Device Information and Current Time, plus our
/// modeled vendor service for stream control, IMU switches, epoch download and status
/// (docs/protocols/actigraph.md).
///
/// On every connection it sets the Link's clock (epochs are stamped with it), reads the status into the state,
/// applies the stream configuration last accepted (`configure`, kept by the gateway) and resumes an interrupted
/// epoch download. Raw acceleration (g) and IMU samples go out per sample with the Link's own timestamps; a gap in
/// a stream's sequence numbers is counted in the state as lost samples, never papered over.
///
/// Epoch downloads (`sync`, or `configure` with the SDK's `epoch` section) remember the newest epoch published:
/// a later `sync` without `since_ts` fetches only newer ones, and a download cut by a dropped link resumes by
/// itself on the next connection after the last epoch handed to the gateway, so no epoch is published twice.
public final class ActiGraphDriver: WearableDriver {

    public static func match(_ device: Advertisement) -> DriverMatch? {
        if device.serviceUUIDs.contains(where: { $0.lowercased() == ActiGraphUUID.service }) { return .certain }
        return serial(of: device) != nil ? .likely : nil
    }


    public static func contractArguments(for command: String, _ arguments: [String: DeviceValue]) throws(CommandError) -> [String: DeviceValue] {
        command == "sync" ? try ActiGraphSyncRange.contractArguments(arguments) : arguments
    }

    /// A Link advertises its serial as its name: `TAS`, then 10 capital letters or digits.
    public static func serial(of device: Advertisement) -> String? {
        guard let name = device.name ?? device.alias, serialPattern(name) else { return nil }
        return name
    }

    static func serialPattern(_ name: String) -> Bool {
        name.utf8.count == 13 && name.hasPrefix("TAS")
            && name.utf8.dropFirst(3).allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }
    }

    /// What holds for one connection.
    private struct Connection {
        var channel: ActiGraphChannel?
        var streams: ActiGraphStreamSettings?
        var serial: String?
        var rawSequence = StreamSequence()
        var imuSequences: [ActiGraphIMUSensor: StreamSequence] = [:]
        var lostSamples = 0
        var lostSamplesReported = 0
    }

    private let connection = Mutex(Connection())
    /// Set once the session has opened the channel; commands wait for it.
    private let channelReady = ConnectionReadiness()
    private let storage: DriverStorage
    private let address: BluetoothAddress
    /// The last stream configuration accepted, applied again on every connection.
    private let configured: Mutex<[String: DeviceValue]>
    private let downloadRunning = Mutex(false)

    public init(configuration: DriverConfiguration) {
        storage = configuration.storage
        address = configuration.address
        configured = Mutex(configuration.configure)
    }

    // MARK: Session

    public func session(_ link: DeviceLink) async throws {
        connection.withLock { $0 = Connection() }
        let service = ActiGraphUUID.service
        guard let control = link.characteristic(service: service, ActiGraphUUID.control),
              let response = link.characteristic(service: service, ActiGraphUUID.controlResponse) else {
            throw CommandError(.notSupported, "not an ActiGraph Link: the vendor service \(service) is missing",
                               vendorCode: 9)
        }
        let channel = ActiGraphChannel(link: link, control: control)
        // Subscribed before the first request, or its response could be missed.
        var notifications = [NotificationHandler(response) { channel.receive($0) }]
        if let raw = link.characteristic(service: service, ActiGraphUUID.rawStream) {
            notifications.append(NotificationHandler(raw) { [self] in rawPacket($0, link) })
        }
        if let imu = link.characteristic(service: service, ActiGraphUUID.imuStream) {
            notifications.append(NotificationHandler(imu) { [self] in imuPacket($0, link) })
        }
        if let battery = link.batteryNotifications() { notifications.append(battery) }
        defer {
            channelReady.reset()
            connection.withLock { $0.channel = nil }
        }
        try await link.runSession(notifications) { [self] in await start(link, channel) }
    }

    /// What the SDK's connect does, then what a gateway adds: the clock, the status, the kept configuration, and
    /// an interrupted download.
    private func start(_ link: DeviceLink, _ channel: ActiGraphChannel) async {
        var state = await link.readDeviceInformationStrings()
        if let battery = await link.readBatteryPercent() { state["battery"] = .integer(Int64(battery)) }
        let serial = state["serial"]?.text
        connection.withLock { $0.serial = serial }
        link.emit(.state(state))
        do { try await link.writeCurrentTime() } catch {
            link.logger.notice("could not set the Link's clock", metadata: ["error": "\(error)"])
        }
        do throws(CommandError) {
            link.emit(.state(try await readStatus(channel)))
        } catch {
            link.logger.warning("could not read the Link's status", metadata: ["error": "\(error)"])
        }
        connection.withLock { $0.channel = channel }
        channelReady.markReady()
        let kept = configured.withLock { $0 }.filter { Self.streamKeys.contains($0.key) }
        if !kept.isEmpty {
            do throws(CommandError) { _ = try await configureStreams(kept, link, channel) } catch {
                link.logger.warning("could not apply the kept stream configuration", metadata: ["error": "\(error)"])
            }
        }
        if let pending = storage.load(Self.syncEntry)?["pending"]?.object,
           let start = pending["next"]?.integer, let stop = pending["stop"]?.integer {
            link.logger.info("resuming the interrupted epoch download")
            _ = try? await download(ActiGraphEpochRange(start: UInt32(clamping: start), stop: UInt32(clamping: stop)),
                                    link, channel)
        }
    }

    /// STATUS as state fields; the stream settings are kept for the next `configure` to merge onto.
    private func readStatus(_ channel: ActiGraphChannel) async throws(CommandError) -> [String: DeviceValue] {
        let data = try await channel.call(.status)
        let status = try VendorSession.decoded(from: ActiGraphChannel.peerName) { () throws(GATTCodecError) in
            try ActiGraphDeviceStatus(decoding: data)
        }
        connection.withLock { $0.streams = status.streams }
        var epochs: [String: DeviceValue] = ["count": .integer(Int64(status.epochCount))]
        if status.epochCount > 0 {
            epochs["first_ts"] = .integer(Int64(status.firstEpoch) * 1000)
            epochs["last_ts"] = .integer(Int64(status.lastEpoch) * 1000)
        }
        return [
            "battery": .integer(Int64(status.batteryPercent)),
            "wear": .flag(status.isWorn),
            "epochs": .object(epochs),
            "device_time": .integer(Int64(status.deviceTime) * 1000),
            "sensors": .object(status.streams.sensorsState),
        ]
    }

    // MARK: Streams

    /// One Raw Stream notification: each sample on `sensor/accelerometer` in g.
    private func rawPacket(_ bytes: [UInt8], _ link: DeviceLink) {
        guard let packet = try? ActiGraphRawPacket(decoding: bytes) else {
            link.logger.debug("dropped a malformed raw packet", metadata: ["bytes": "\(bytes.count)"])
            return
        }
        countLoss { $0.rawSequence.advance(to: packet.sequence, samplesPerPacket: packet.samples.count) }
        for sample in packet.accelerations {
            link.emit(.sample(SensorSample(sensor: .accelerometer, timestamp: sample.timestamp,
                                           reading: .vector(x: sample.x, y: sample.y, z: sample.z, accuracy: nil))))
        }
        reportLoss(link)
    }

    /// One IMU Stream notification: accelerometer (g), gyroscope (°/s), magnetometer (µT) or temperature (°C).
    private func imuPacket(_ bytes: [UInt8], _ link: DeviceLink) {
        guard let packet = try? ActiGraphIMUPacket(decoding: bytes) else {
            link.logger.debug("dropped a malformed IMU packet", metadata: ["bytes": "\(bytes.count)"])
            return
        }
        countLoss { $0.imuSequences[packet.sensor, default: StreamSequence()].advance(to: packet.sequence,
                                                                                     samplesPerPacket: packet.rawSamples.count) }
        let kind: SensorKind = switch packet.sensor {
        case .accelerometer: .accelerometer
        case .gyroscope: .gyroscope
        case .magnetometer: .magnetometer
        case .temperature: .temperature
        }
        for measurement in packet.measurements {
            let values = measurement.values
            let reading: SensorReading = values.count == 3
                ? .vector(x: values[0], y: values[1], z: values[2], accuracy: nil)
                : .celsius(values.first ?? 0)
            link.emit(.sample(SensorSample(sensor: kind, timestamp: measurement.timestamp, reading: reading)))
        }
        reportLoss(link)
    }

    private func countLoss(_ advance: (inout Connection) -> Int) {
        connection.withLock { connection in connection.lostSamples += advance(&connection) }
    }

    /// Publishes the lost-sample count when it changed, so a gap shows in the state rather than passing unseen.
    private func reportLoss(_ link: DeviceLink) {
        let changed: Int? = connection.withLock { connection in
            defer { connection.lostSamplesReported = connection.lostSamples }
            return connection.lostSamples != connection.lostSamplesReported ? connection.lostSamples : nil
        }
        if let changed { link.emit(.state(["lost_samples": .integer(Int64(changed))])) }
    }

    // MARK: Commands

    static let streamKeys: Set<String> = ["raw", "imu", "sensors", "raw_stream"]
    static let syncEntry = "sync"
    /// The SDK's "Wireless Transfer Error": a page the Link failed to read, worth one more try.
    static let wirelessTransferError = 6

    public func execute(_ command: DeviceCommand, link: DeviceLink) async throws(CommandError) -> DeviceValue {
        let channel = try await VendorSession.ready({ connection.withLock { $0.channel } }, when: channelReady,
                                                  peerName: ActiGraphChannel.peerName, link: link)
        switch command {
        case .configure(let request):
            return try await configure(request, link, channel)
        case .sync(let since, let until):
            let range = try epochRange(since: since, until: until)
            return .object(try await download(range, link, channel))
        case .refresh:
            var state = await link.readDeviceInformationStrings()
            state.merge(try await readStatus(channel)) { $1 }
            link.emit(.state(state))
            return .object(state)
        case .timeSync:
            try await link.writeCurrentTime()
            return .object([:])
        default:
            throw CommandError(.notSupported, "\(command.name) is not supported by ActiGraph Links")
        }
    }

    /// The SDK's `configureDevice`: validates everything before sending anything, then the streams, then an
    /// epoch download. Answers the stream configuration now in force (what the gateway keeps), and the download's
    /// result under `epoch` when one was asked for.
    private func configure(_ request: [String: DeviceValue], _ link: DeviceLink, _ channel: ActiGraphChannel) async throws(CommandError) -> DeviceValue {
        let current = connection.withLock { $0.streams } ?? ActiGraphStreamSettings.off
        let parsed = try ActiGraphConfigurationRequest.parse(request, current: current)
        var answer = current.configurationObject
        if let streams = parsed.streams { answer = try await apply(streams, link, channel).configurationObject }
        if let range = parsed.epochRange {
            var result = try await download(range, link, channel)
            result["startDateTime"] = .text(ActiGraphSDKDate.text(fromUnixSeconds: Int64(range.start)))
            result["stopDateTime"] = .text(ActiGraphSDKDate.text(fromUnixSeconds: Int64(range.stop)))
            answer["epoch"] = .object(result)
        }
        return .object(answer)
    }

    private func configureStreams(_ request: [String: DeviceValue], _ link: DeviceLink, _ channel: ActiGraphChannel) async throws(CommandError) -> ActiGraphStreamSettings {
        let current = connection.withLock { $0.streams } ?? ActiGraphStreamSettings.off
        guard let streams = try ActiGraphConfigurationRequest.parse(request, current: current).streams else { return current }
        return try await apply(streams, link, channel)
    }

    /// SET_STREAMS; the Link answers the settings in force, which become the state's `sensors` and the kept
    /// configuration.
    private func apply(_ streams: ActiGraphStreamSettings, _ link: DeviceLink, _ channel: ActiGraphChannel) async throws(CommandError) -> ActiGraphStreamSettings {
        let data = try await channel.call(.setStreams(streams))
        let applied = try VendorSession.decoded(from: ActiGraphChannel.peerName) { () throws(GATTCodecError) in
            try ActiGraphStreamSettings(decoding: data)
        }
        connection.withLock { $0.streams = applied }
        configured.withLock { $0 = applied.configurationObject }
        link.emit(.state(["sensors": .object(applied.sensorsState)]))
        return applied
    }

    /// `sync`'s range in the Link's seconds: `since_ts` rounded up and `until_ts` down to whole seconds; without
    /// `since_ts`, the epochs after the newest one already published.
    private func epochRange(since: Int64?, until: Int64?) throws(CommandError) -> ActiGraphEpochRange {
        let start: UInt32
        if let since {
            start = UInt32(clamping: (since + 999) / 1000)
        } else {
            start = storage.load(Self.syncEntry)?["cursor"]?.integer.map { UInt32(clamping: $0 + 1) } ?? 0
        }
        let stop = until.map { UInt32(clamping: $0 / 1000) } ?? UInt32.max
        guard start <= stop else {
            throw CommandError(.invalidValue, "since_ts must not be after until_ts", vendorCode: ActiGraphConfigurationRequest.dateFormatError)
        }
        return ActiGraphEpochRange(start: start, stop: stop)
    }

    // MARK: Epoch download

    /// Downloads the epochs of `range` page by page. After a page's epochs are handed to the gateway (durable
    /// from there) the newest one's time is stored, both as the download's resume point and as the cursor of
    /// later syncs, and only then is the page acknowledged: a dropped link loses no epoch and repeats none.
    private func download(_ range: ActiGraphEpochRange, _ link: DeviceLink, _ channel: ActiGraphChannel) async throws(CommandError) -> [String: DeviceValue] {
        let first = downloadRunning.withLock { running in defer { running = true }; return !running }
        guard first else { throw CommandError(.busy, "an epoch download is already running") }
        defer { downloadRunning.withLock { $0 = false } }
        var entry = storage.load(Self.syncEntry) ?? [:]
        entry["pending"] = .object(["next": .integer(Int64(range.start)), "stop": .integer(Int64(range.stop))])
        try storage.save(Self.syncEntry, entry)
        let serial = connection.withLock { $0.serial } ?? address.rawValue.replacing(":", with: "")
        let openData = try await channel.call(.epochOpen(range))
        let opened = try VendorSession.decoded(from: ActiGraphChannel.peerName) { () throws(GATTCodecError) in
            try ActiGraphEpochOpened(decoding: openData)
        }
        var lastTimestamp = entry["cursor"]?.integer.map { $0 * 1000 }
        link.emit(.progress(key: "sync", OperationProgress(state: "started", percent: 0, lastTimestamp: lastTimestamp)))
        var published = 0
        for page in 0..<opened.pageCount {
            let pageData: [UInt8]
            do {
                pageData = try await channel.call(.epochPage(page))
            } catch where error.vendorCode == Self.wirelessTransferError {
                // The Link could not read the page from its storage: asked once more before giving up.
                link.logger.notice("the Link could not read an epoch page; asking again", metadata: ["page": "\(page)"])
                pageData = try await channel.call(.epochPage(page))
            }
            let contents = try VendorSession.decoded(from: ActiGraphChannel.peerName) { () throws(GATTCodecError) in
                try ActiGraphEpochPage(decoding: pageData)
            }
            let epochs = contents.records.filter { $0.timestamp >= range.start && $0.timestamp <= range.stop }
            // Stored in the spool before the cursor moves and the Link forgets the page; one commit, so a handover
            // reads the cursor either before the page went out or after it moved.
            try await link.commit(epochs.map { $0.fitnessRecord(serial: serial) }) { () throws(CommandError) in
                guard let newest = epochs.map(\.timestamp).max() else { return }
                entry["pending"] = .object(["next": .integer(Int64(newest) + 1), "stop": .integer(Int64(range.stop))])
                let cursor = max(entry["cursor"]?.integer ?? 0, Int64(newest))
                entry["cursor"] = .integer(cursor)
                try storage.save(Self.syncEntry, entry)
                lastTimestamp = cursor * 1000
            }
            published += epochs.count
            _ = try await channel.call(.epochAck(page))
            let percent = (Double(page + 1) / Double(opened.pageCount) * 1000).rounded() / 10
            link.emit(.progress(key: "sync", OperationProgress(state: "downloading", percent: percent, lastTimestamp: lastTimestamp)))
        }
        entry["pending"] = nil
        try storage.save(Self.syncEntry, entry)
        // Not running any more before it says so: a client that syncs again on seeing `completed` is not told BUSY.
        downloadRunning.withLock { $0 = false }
        link.emit(.progress(key: "sync", OperationProgress(state: "completed", percent: 100, lastTimestamp: lastTimestamp)))
        return ["epochs": .integer(Int64(published)), "pages": .integer(Int64(opened.pageCount))]
    }
}

/// The sequence numbers of one stream within a connection: each packet's number after the first should be the
/// previous one plus 1 (wrapping); a jump means packets were lost on the air.
struct StreamSequence: Sendable {
    private var last: UInt16?

    /// Samples lost before this packet, estimated from the gap and this packet's size (the Link's packets of one
    /// stream are the same size for a connection). A number at or behind the last one (a repeat, or the Link
    /// restarting its count) counts nothing and restarts the count from it.
    mutating func advance(to sequence: UInt16, samplesPerPacket: Int) -> Int {
        defer { last = sequence }
        guard let last else { return 0 }
        let gap = sequence &- last
        guard gap != 0, gap < 0x8000 else { return 0 }
        return Int(gap - 1) * max(samplesPerPacket, 1)
    }
}
