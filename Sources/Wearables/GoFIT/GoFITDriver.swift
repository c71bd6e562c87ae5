import BlueZ
import FoundationEssentials
import Synchronization

/// The driver for GOLiFE GoFIT bands (Care-Xc, Care-Xe, …): standard Battery, Device Information, Current Time
/// and Immediate Alert, plus our modeled vendor service for pairing, settings, fitness history, find and the
/// destructive commands (docs/protocols/gofit.md).
///
/// Pairing is the band's own: `device/pair` makes it show a code, `device/pair/confirm` sends the code the
/// wearer read and stores the key the band returns (in the device's `DriverStorage`, a file only the gateway
/// can read). Every later connection authenticates with that key and then does what the SDK's connect does:
/// set the band's clock. A band that refuses the key (initialised, or paired with another host) is reported once
/// as a `pairing_required` event and left connected and idle for a new `device/pair`; it is never retried in a
/// loop. A history download (`sync`) remembers per kind the last record it published, so an interrupted one
/// resumes by itself on the next connection and a second one publishes only new records.
public final class GoFITDriver: WearableDriver {

    public static func match(_ device: Advertisement) -> DriverMatch? {
        if device.serviceUUIDs.contains(where: { $0.lowercased() == GoFITUUID.service }) { return .certain }
        let name = device.name ?? device.alias ?? ""
        return name.hasPrefix("Care-X") || name.hasPrefix("GoFIT") ? .likely : nil
    }

    /// What holds for one connection.
    private struct Connection {
        var channel: GoFITChannel?
        var authenticated = false
        /// Connected, and the stored key not yet proven (or found missing): a command now is early, not unpaired.
        var authenticating = true
        /// The pairing time of the code the band shows after `pair`, needed by `pair_confirm`.
        var pairingTime: UInt32?
        /// The band's settings as last read or written.
        var settings: [GoFITSettingID: GoFITSetting] = [:]
        var serial: String?
    }

    private let connection = Mutex(Connection())
    /// Set once the session has opened the channel; commands wait for it.
    private let channelReady = ConnectionReadiness()
    private let storage: DriverStorage
    private let address: BluetoothAddress
    /// Set once `pairing_required` was reported, so a band that stays unpaired is not reported at every reconnect.
    private let pairingRequiredReported = Mutex(false)
    private let syncRunning = Mutex(false)
    /// How often an interrupted download is asked to resume while the one before it still winds down (500 ms apart).
    private static let resumeAttempts = 20

    public init(configuration: DriverConfiguration) {
        storage = configuration.storage
        address = configuration.address
    }

    // MARK: Session

    public func session(_ link: DeviceLink) async throws {
        connection.withLock { $0 = Connection() }
        guard let request = link.characteristic(service: GoFITUUID.service, GoFITUUID.request),
              let response = link.characteristic(service: GoFITUUID.service, GoFITUUID.response) else {
            throw CommandError(.notSupported, "the band lacks the GoFIT vendor service \(GoFITUUID.service)")
        }
        let channel = GoFITChannel(link: link, request: request) { event in
            switch event {
            case .findPhone: link.emit(.event(name: "find_phone", timestamp: link.now, details: [:]))
            }
        }
        // Subscribed before the first request, or its response could be missed.
        let notifications = [NotificationHandler(response) { channel.receive($0) }] + [link.batteryNotifications()].compactMap { $0 }
        defer {
            channelReady.reset()
            connection.withLock { $0.channel = nil }
        }
        try await link.runSession(notifications) { [self] in
            var state = await link.readDeviceInformationStrings()
            if let battery = await link.readBatteryPercent() { state["battery"] = .integer(Int64(battery)) }
            connection.withLock {
                $0.serial = state["serial"]?.text
                $0.channel = channel
            }
            channelReady.markReady()
            link.emit(.state(state))
            await authenticate(link, channel)
        }
    }

    /// Proves the stored key to the band, then does what the SDK's connect does next: the clock, the identity,
    /// the settings; and resumes an interrupted sync.
    private func authenticate(_ link: DeviceLink, _ channel: GoFITChannel) async {
        defer { connection.withLock { $0.authenticating = false } }
        guard let key = storage.load("credentials")?["key"]?.text.flatMap(Self.bytes(hex:)), key.count == 16 else {
            reportPairingRequired(link, reason: "the band has not been paired with this gateway; send device/pair")
            return
        }
        do throws(CommandError) {
            let challenge = try await channel.call(.authChallenge)
            let nonce = try Self.decoded { () throws(GATTCodecError) in try GoFITChallenge(decoding: challenge) }.nonce
            _ = try await channel.call(.authProof(GoFITAuthentication.proof(key: key, nonce: nonce)))
        } catch where error.code == .pairingRequired {
            reportPairingRequired(link, reason: "the band no longer accepts this gateway's key (initialised, or paired "
                                  + "with another host); send device/pair")
            return
        } catch {
            link.logger.warning("could not authenticate with the band", metadata: ["error": "\(error)"])
            return
        }
        await authenticated(link, channel)
    }

    /// The rest of the connection once the band trusts us.
    private func authenticated(_ link: DeviceLink, _ channel: GoFITChannel) async {
        connection.withLock { $0.authenticated = true }
        pairingRequiredReported.withLock { $0 = false }
        link.emit(.state(["pairing": "paired"]))
        do { try await link.writeCurrentTime() } catch {
            link.logger.notice("could not set the band's clock", metadata: ["error": "\(error)"])
        }
        do throws(CommandError) {
            link.emit(.state(try await readIdentity(channel)))
            link.emit(.state(["settings": .object(try await readSettings(channel, ids: []))]))
        } catch {
            link.logger.warning("could not read the band's identity and settings", metadata: ["error": "\(error)"])
        }
        if let pending = storage.load("sync")?["pending"]?.object {
            link.logger.info("resuming the interrupted history download")
            let since = pending["since"]?.integer.map(UInt32.init) ?? 0, until = pending["until"]?.integer.map(UInt32.init) ?? UInt32.max
            // The download the dropped link interrupted may still be winding down (its request waits for its task to
            // end), and holds the one-sync guard until it does: asked again rather than given up as BUSY.
            for attempt in 1...Self.resumeAttempts {
                do throws(CommandError) {
                    _ = try await runSync(since: since, until: until, link, channel)
                    break
                } catch where error.code == .busy && attempt < Self.resumeAttempts && link.isConnected {
                    try? await link.time.sleep(for: .milliseconds(500))
                } catch {
                    break
                }
            }
        }
    }

    private func reportPairingRequired(_ link: DeviceLink, reason: String) {
        link.emit(.state(["pairing": "required"]))
        let first = pairingRequiredReported.withLock { reported in defer { reported = true }; return !reported }
        guard first else { return }
        link.logger.warning("the band needs pairing", metadata: ["reason": "\(reason)"])
        link.emit(.event(name: "pairing_required", timestamp: link.now, details: ["message": .text(reason)]))
    }

    private func readIdentity(_ channel: GoFITChannel) async throws(CommandError) -> [String: DeviceValue] {
        let data = try await channel.call(.identity)
        let identity = try Self.decoded { () throws(GATTCodecError) in try GoFITIdentity(decoding: data) }
        return ["mac": .text(identity.macString), "product_id": .integer(Int64(identity.productID))]
    }

    /// Reads settings (`ids` empty: all), keeps them, and answers them as the state shows them.
    private func readSettings(_ channel: GoFITChannel, ids: [GoFITSettingID]) async throws(CommandError) -> [String: DeviceValue] {
        let data = try await channel.call(.settingsRead(ids: ids.map(\.rawValue)))
        let settings = try Self.decoded { () throws(GATTCodecError) in
            try GoFITSettingTLV.decodeList(data).map { tlv throws(GATTCodecError) in try GoFITSetting(tlv: tlv) }
        }
        let all = connection.withLock { connection in
            for setting in settings { connection.settings[setting.id] = setting }
            return Array(connection.settings.values)
        }
        return GoFITSettingsUpdate.settingsObject(all.sorted { $0.id.rawValue < $1.id.rawValue })
    }

    // MARK: Commands

    public func execute(_ command: DeviceCommand, link: DeviceLink) async throws(CommandError) -> DeviceValue {
        let channel = try await readyChannel(link)
        switch command {
        case .named("pair", _):
            let data = try await channel.call(.pairStart)
            let started = try Self.decoded { () throws(GATTCodecError) in try GoFITPairingStarted(decoding: data) }
            connection.withLock { $0.pairingTime = started.pairingTime }
            return .object(["state": "code_required", "pairing_time": .integer(Int64(started.pairingTime) * 1000)])
        case .named("pair_confirm", let arguments):
            return try await confirmPairing(code: arguments["code"]?.text, link, channel)
        case .refresh:
            var state = await link.readDeviceInformationStrings()
            if let battery = await link.readBatteryPercent() { state["battery"] = .integer(Int64(battery)) }
            // Battery and Device Information need no pairing; the band's identity does.
            if connection.withLock({ $0.authenticated }) { state.merge(try await readIdentity(channel)) { $1 } }
            link.emit(.state(state))
            return .object(state)
        case .timeSync:
            try await link.writeCurrentTime()
            return .object([:])
        case .find(let vibrations, let level):
            if level != nil { return try await link.immediateAlert(vibrations: vibrations, level: level) }
            let count = vibrations ?? 3
            guard (1...10).contains(count) else { throw .invalidValue(field: "vibrations", "must be 1 to 10, not \(count)") }
            try requireAuthentication()
            _ = try await channel.call(.findBand(vibrations: UInt8(count)))
            return .object(["vibrations": .integer(Int64(count))])
        case .settings(let request):
            try requireAuthentication()
            return try await settings(request, link, channel)
        case .sync(let since, let until):
            try requireAuthentication()
            let sinceSeconds = since.map { UInt32(clamping: ($0 + 999) / 1000) } ?? 0
            let untilSeconds = until.map { UInt32(clamping: $0 / 1000) } ?? UInt32.max
            guard sinceSeconds <= untilSeconds else { throw .invalidValue(field: "since_ts", "must not be after until_ts") }
            return try await runSync(since: sinceSeconds, until: untilSeconds, link, channel)
        case .named("clear_data", _):
            try requireAuthentication()
            _ = try await channel.call(.clearData)
            try storage.remove("sync")
            return .object([:])
        case .named("factory_reset", _):
            try requireAuthentication()
            _ = try await channel.call(.initialise)
            try storage.remove("credentials")
            try storage.remove("sync")
            connection.withLock { $0.authenticated = false; $0.settings = [:] }
            reportPairingRequired(link, reason: "the band was initialised; send device/pair")
            return .object([:])
        default:
            throw CommandError(.notSupported, "\(command.name) is not supported by GoFIT bands")
        }
    }

    private func confirmPairing(code: String?, _ link: DeviceLink, _ channel: GoFITChannel) async throws(CommandError) -> DeviceValue {
        guard let code, code.count == 4, code.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw .invalidValue(field: "code", "must be the 4 digits the band shows")
        }
        guard let pairingTime = connection.withLock({ $0.pairingTime }) else {
            throw .invalidValue(field: "code", "no code is shown on the band; send device/pair first")
        }
        let data = try await channel.call(.pairConfirm(code: code, pairingTime: pairingTime))
        let key = try Self.decoded { () throws(GATTCodecError) in try GoFITPairingKey(decoding: data) }.key
        try storage.save("credentials", ["key": .text(Self.hex(key)), "paired_at": .integer(link.now),
                                         "pairing_time": .integer(Int64(pairingTime) * 1000)])
        connection.withLock { $0.pairingTime = nil }
        await authenticated(link, channel)
        return .object(["state": "paired"])
    }

    private func settings(_ request: [String: DeviceValue], _ link: DeviceLink, _ channel: GoFITChannel) async throws(CommandError) -> DeviceValue {
        guard !request.isEmpty else {
            let all = try await readSettings(channel, ids: [])
            link.emit(.state(["settings": .object(all)]))
            return .object(["settings": .object(all)])
        }
        // The band's current value of every object the request touches, so a partial object merges onto it.
        let touched = request.keys.compactMap(GoFITSettingID.init(key:))
        if !touched.isEmpty { _ = try await readSettings(channel, ids: touched) }
        let current = connection.withLock { $0.settings }
        let updated = try GoFITSettingsUpdate.parse(request, current: current)
        _ = try await channel.call(.settingsWrite(updated.map { $0.tlv() }))
        let all = connection.withLock { connection in
            for setting in updated { connection.settings[setting.id] = setting }
            return connection.settings.values.sorted { $0.id.rawValue < $1.id.rawValue }
        }
        link.emit(.state(["settings": .object(GoFITSettingsUpdate.settingsObject(all))]))
        return .object(["settings": .object(GoFITSettingsUpdate.settingsObject(updated))])
    }

    // MARK: History

    /// Downloads every kind page by page. Once a page's records are stored durably by the gateway
    /// (`emitDurably`), the last one's time is stored as the kind's cursor and the page acknowledged: a later sync,
    /// or the resumption of this one after a dropped link, starts after it, so no record is published twice.
    private func runSync(since: UInt32, until: UInt32, _ link: DeviceLink, _ channel: GoFITChannel) async throws(CommandError) -> DeviceValue {
        let first = syncRunning.withLock { running in defer { running = true }; return !running }
        guard first else { throw CommandError(.busy, "a history download is already running", vendorCode: 33) }
        defer { syncRunning.withLock { $0 = false } }
        var entry = storage.load("sync") ?? [:]
        entry["pending"] = .object(["since": .integer(Int64(since)), "until": .integer(Int64(until))])
        try storage.save("sync", entry)
        let serial = connection.withLock { $0.serial } ?? address.rawValue.replacing(":", with: "")
        var published: [String: DeviceValue] = [:]
        var lastTimestamp: Int64?
        let kinds = GoFITHistoryKind.allCases
        for (index, kind) in kinds.enumerated() {
            let cursor = entry["cursors"]?[kind.topicKind]?.integer.map { UInt32(clamping: $0 + 1) } ?? 0
            let openData = try await channel.call(.historyOpen(kind: kind, since: max(since, cursor), until: until))
            let opened = try Self.decoded { () throws(GATTCodecError) in try GoFITHistoryOpened(decoding: openData) }
            var count = 0
            for page in 0..<opened.pageCount {
                let pageData = try await channel.call(.historyPage(kind: kind, page: page))
                let contents = try Self.decoded { () throws(GATTCodecError) in try GoFITHistoryPage(decoding: pageData) }
                // Stored in the spool before the cursor moves and the band forgets the page (a kill in between
                // then repeats records, with the same ids, rather than losing them); one commit, so a handover reads
                // the cursor either before the page went out or after it moved.
                try await link.commit(contents.records.map { $0.fitnessRecord(serial: serial) }) { () throws(CommandError) in
                    guard let last = contents.records.map(\.timestamp).max() else { return }
                    var cursors = entry["cursors"]?.object ?? [:]
                    cursors[kind.topicKind] = .integer(Int64(last))
                    entry["cursors"] = .object(cursors)
                    try storage.save("sync", entry)
                    lastTimestamp = max(lastTimestamp ?? 0, Int64(last) * 1000)
                }
                count += contents.records.count
                _ = try await channel.call(.historyAck(kind: kind, page: page))
                let percent = (Double(index) + Double(page + 1) / Double(opened.pageCount)) / Double(kinds.count) * 100
                link.emit(.progress(key: "sync", OperationProgress(state: "syncing", percent: percent.rounded(),
                                                                    lastTimestamp: lastTimestamp)))
            }
            published[kind.topicKind] = .integer(Int64(count))
        }
        entry["pending"] = nil
        try storage.save("sync", entry)
        // Not running any more before it says so: a client that syncs again on seeing `idle` is not told BUSY.
        syncRunning.withLock { $0 = false }
        link.emit(.progress(key: "sync", OperationProgress(state: "idle", percent: 100, lastTimestamp: lastTimestamp)))
        return .object(["records": .object(published)])
    }

    // MARK: Helpers

    private func readyChannel(_ link: DeviceLink) async throws(CommandError) -> GoFITChannel {
        try await VendorSession.ready({ connection.withLock { $0.channel } }, when: channelReady, peerName: "the band", link: link)
    }

    /// Throws `PAIRING_REQUIRED` unless this connection authenticated; `BUSY` while it is still proving its key.
    private func requireAuthentication() throws(CommandError) {
        let (authenticated, authenticating) = connection.withLock { ($0.authenticated, $0.authenticating) }
        if !authenticated && authenticating {
            throw CommandError(.busy, "the band's session is still starting (proving the stored key); try again in a moment")
        }
        guard authenticated else {
            throw CommandError(.pairingRequired, "the band is not paired with this gateway; send device/pair, then device/pair/confirm with its code")
        }
    }

    private static func decoded<T>(_ body: () throws(GATTCodecError) -> T) throws(CommandError) -> T {
        try VendorSession.decoded(from: "the band", body)
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    static func bytes(hex: String) -> [UInt8]? {
        guard hex.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
