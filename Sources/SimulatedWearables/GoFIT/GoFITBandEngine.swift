import Wearables

/// The band side of the GoFIT vendor service (docs/protocols/gofit.md) as a pure state machine: segments written
/// to Request go in with the current time, the segments to notify on Response come out. No I/O and no clock; the
/// simulated Care-Xc (`SimulatedCareXc`) feeds it and delivers what it answers.
///
/// What it keeps and the rules it follows:
/// - **Frames and retransmission** are `FramedResponder`'s (malformed frames dropped and counted, the last
///   response answered again for a repeated opcode and sequence without executing twice).
/// - **Pairing.** `PAIR_START` shows a random 4-digit code for 120 s (`pairingCodeLifetime`), with the current
///   time as the pairing time. `PAIR_CONFIRM` with a wrong code is 14 and counts a wrong try; the third wrong
///   try is still 14 and ends the pairing; with no code shown, another pairing time, or after 120 s it is 15.
///   The right code stores a new random 16-byte key (replacing any old one) and authenticates the connection.
/// - **Authentication.** `AUTH_CHALLENGE` answers a fresh random nonce (even unpaired); `AUTH_PROOF` is 22
///   without a key, 23 for a wrong proof or without a challenge (a nonce is used once), else authenticated.
///   Until then every opcode but those five (`GoFITOpcode.isAllowedBeforeAuthentication`) is 23, or 22 with
///   no key. Authentication ends with the connection (`connectionEnded()`).
/// - **Statuses.** An unknown opcode, setting id or history kind is 21; a payload of the wrong length or a
///   value out of range (a non-digit code, 0 or 11 vibrations, a bad setting) is 18.
/// - **Settings.** Start at `GoFITSetting.factoryDefaults`. `SETTINGS_READ` answers the ids asked (all when
///   none) in id order; `SETTINGS_WRITE` decodes every TLV with `GoFITSetting(tlv:)` before applying any:
///   one bad TLV is 18 (21 for an unknown id) and nothing changes; an empty write is 18.
/// - **History.** `GoFITBandHistoryStore`: one transfer at a time (a new `HISTORY_OPEN` replaces it), pages of
///   64 fixed-size records or one activity, acknowledged in order once read (else 18).
/// - `FIND_BAND` vibrates 1–10 times (`vibrations` adds them up); `CLEAR_DATA` erases the history;
///   `INITIALISE` erases the history, restores the factory settings, forgets the key and the code, and asks
///   for the link to be dropped once the answer is out (`takeDisconnectRequest()`).
/// - **Events.** `findPhoneEvent()` makes a `FIND_PHONE` frame with the band's own sequence number.
///
/// Does not: time out anything but the pairing code, record new history, or know about GATT or links.
public struct GoFITBandEngine: Sendable, FramedDeviceEngine {
    public static let pairingCodeLifetime: UInt32 = 120
    public static let maximumWrongCodes = 3
    public static let findBandRange: ClosedRange<UInt8> = 1...10

    /// The code the band shows, when it was shown, and how many wrong codes were tried.
    public struct ShownCode: Sendable, Equatable {
        public let code: String
        public let pairingTime: UInt32
        public internal(set) var wrongTries = 0
    }

    /// Things tests and the simulator's `Inspect` read.
    public struct Counters: Sendable, Equatable {
        public internal(set) var vibrations = 0
        public internal(set) var settingsWrites = 0
        public internal(set) var clears = 0
        public internal(set) var initialisations = 0
        public internal(set) var historyPagesServed = 0
        public internal(set) var findPhoneEvents = 0
    }

    public let identity: GoFITIdentity
    /// Reassembly, the retransmission cache and segmenting, with their counters.
    public internal(set) var frames = FramedResponder()
    public private(set) var pairingKey: [UInt8]?
    public private(set) var shownCode: ShownCode?
    public private(set) var isAuthenticated = false
    public private(set) var counters = Counters()
    private(set) var settings: [GoFITSettingID: GoFITSetting]
    private(set) var history: GoFITBandHistoryStore
    private var random: SimulationRandom
    private var nonce: [UInt8]?
    private var eventSequence: UInt8 = 0
    private var disconnectRequested = false

    /// `seed` draws the pairing codes, keys and nonces; `pairingKey` pre-pairs the band.
    public init(seed: UInt64, identity: GoFITIdentity, history: [GoFITHistoryRecord] = [], pairingKey: [UInt8]? = nil) {
        random = SimulationRandom(seed: seed)
        self.identity = identity
        self.history = GoFITBandHistoryStore(history)
        self.pairingKey = pairingKey
        settings = Self.factorySettings
    }

    static var factorySettings: [GoFITSettingID: GoFITSetting] {
        Dictionary(uniqueKeysWithValues: GoFITSetting.factoryDefaults.map { ($0.id, $0) })
    }

    /// The settings the band holds, in id order.
    public var currentSettings: [GoFITSetting] { settings.values.sorted { $0.id < $1.id } }

    /// Records held, every kind.
    public var historyRecordCount: Int { history.count }

    /// Records not yet acknowledged, every kind.
    public var unacknowledgedRecordCount: Int { history.unacknowledgedCount }

    /// The code on the band's display at `now`, nil when none is shown (never started, confirmed, ended by wrong
    /// tries, or expired).
    public func pairingCode(at now: UInt32) -> String? {
        guard let shown = shownCode, !Self.hasExpired(shown, at: now) else { return nil }
        return shown.code
    }

    static func hasExpired(_ shown: ShownCode, at now: UInt32) -> Bool {
        Int64(now) - Int64(shown.pairingTime) > Int64(pairingCodeLifetime) || now < shown.pairingTime
    }

    // MARK: Connection

    /// The wearer asked the band to find the phone: the event's segments.
    public mutating func findPhoneEvent() -> [[UInt8]] {
        let frame = GoFITEvent.findPhone.frame(sequence: eventSequence)
        eventSequence &+= 1
        counters.findPhoneEvents += 1
        return frames.segments(of: frame)
    }

    /// The link went: authentication, the challenge, the open transfer, the cached response and any half
    /// received frame go with it. The key, the code on the display, settings and history stay.
    public mutating func connectionEnded() {
        isAuthenticated = false
        nonce = nil
        frames.connectionEnded()
        history.closeTransfer()
        disconnectRequested = false
    }

    /// True once after a request that makes the band hang up (`INITIALISE`); the peripheral then drops the link
    /// after notifying the answer.
    public mutating func takeDisconnectRequest() -> Bool {
        defer { disconnectRequested = false }
        return disconnectRequested
    }

    // MARK: Requests

    mutating func execute(_ frame: VendorFrame, now: UInt32) -> VendorFrame {
        guard let opcode = GoFITOpcode(rawValue: frame.opcode) else {
            return VendorFrame(opcode: frame.opcode | 0x80, sequence: frame.sequence,
                              payload: [GoFITStatus.notImplemented.rawValue])
        }
        let (status, data) = answer(opcode, frame, now: now)
        return GoFITResponse(opcode: opcode, sequence: frame.sequence, status: status, data: status == .ok ? data : [])
            .frame()
    }

    private mutating func answer(_ opcode: GoFITOpcode, _ frame: VendorFrame, now: UInt32) -> (GoFITStatus, [UInt8]) {
        guard isAuthenticated || opcode.isAllowedBeforeAuthentication else {
            return (pairingKey == nil ? .pairingNeeded : .authorizationNeeded, [])
        }
        let request: GoFITRequest
        do {
            request = try GoFITRequest(frame: frame)
        } catch {
            return (Self.status(for: error), [])
        }
        switch request {
        case .pairStart:
            return startPairing(now: now)
        case .pairConfirm(let code, let pairingTime):
            return confirmPairing(code: code, pairingTime: pairingTime, now: now)
        case .authChallenge:
            let fresh = randomBytes(GoFITChallenge.length)
            nonce = fresh
            return (.ok, GoFITChallenge(nonce: fresh).encoded())
        case .authProof(let proof):
            return checkProof(proof)
        case .identity:
            return (.ok, identity.encoded())
        case .settingsRead(let ids):
            return readSettings(ids)
        case .settingsWrite(let tlvs):
            return writeSettings(tlvs)
        case .historyOpen(let kind, let since, let until):
            return (.ok, history.open(kind, since: since, until: until).encoded())
        case .historyPage(let kind, let page):
            guard let contents = history.page(kind, page) else { return (.settingFormatError, []) }
            counters.historyPagesServed += 1
            return (.ok, contents.encoded())
        case .historyAck(let kind, let page):
            return (history.acknowledge(kind, page) ? .ok : .settingFormatError, [])
        case .historyStatus:
            return (.ok, history.status.encoded())
        case .findBand(let vibrations):
            guard Self.findBandRange.contains(vibrations) else { return (.settingFormatError, []) }
            counters.vibrations += Int(vibrations)
            return (.ok, [])
        case .clearData:
            history.erase()
            counters.clears += 1
            return (.ok, [])
        case .initialise:
            history.erase()
            settings = Self.factorySettings
            pairingKey = nil
            shownCode = nil
            nonce = nil
            isAuthenticated = false
            counters.initialisations += 1
            disconnectRequested = true
            return (.ok, [])
        }
    }

    /// An unknown id (opcode, setting, history kind) is 21; anything else malformed or out of range is 18.
    static func status(for error: GATTCodecError) -> GoFITStatus {
        if case .unknownIdentifier = error { return .notImplemented }
        return .settingFormatError
    }

    private mutating func startPairing(now: UInt32) -> (GoFITStatus, [UInt8]) {
        let code = String(Int.random(in: 0...9999, using: &random)).leftPadded(to: 4)
        shownCode = ShownCode(code: code, pairingTime: now)
        return (.ok, GoFITPairingStarted(pairingTime: now).encoded())
    }

    private mutating func confirmPairing(code: String, pairingTime: UInt32, now: UInt32) -> (GoFITStatus, [UInt8]) {
        guard var shown = shownCode, shown.pairingTime == pairingTime, !Self.hasExpired(shown, at: now) else {
            return (.pairingCodeNotFound, [])
        }
        guard code == shown.code else {
            shown.wrongTries += 1
            shownCode = shown.wrongTries >= Self.maximumWrongCodes ? nil : shown
            return (.pairingFailed, [])
        }
        let key = randomBytes(GoFITPairingKey.length)
        pairingKey = key
        shownCode = nil
        isAuthenticated = true
        return (.ok, GoFITPairingKey(key: key).encoded())
    }

    private mutating func checkProof(_ proof: [UInt8]) -> (GoFITStatus, [UInt8]) {
        guard let key = pairingKey else { return (.pairingNeeded, []) }
        defer { nonce = nil }
        guard let nonce, proof == GoFITAuthentication.proof(key: key, nonce: nonce) else {
            isAuthenticated = false
            return (.authorizationNeeded, [])
        }
        isAuthenticated = true
        return (.ok, [])
    }

    private func readSettings(_ ids: [UInt8]) -> (GoFITStatus, [UInt8]) {
        var wanted: [GoFITSettingID] = []
        for raw in ids {
            guard let id = GoFITSettingID(rawValue: raw) else { return (.notImplemented, []) }
            wanted.append(id)
        }
        let chosen = wanted.isEmpty ? GoFITSettingID.allCases : Array(Set(wanted)).sorted()
        return (.ok, GoFITSettingTLV.encode(chosen.compactMap { settings[$0]?.tlv() }))
    }

    private mutating func writeSettings(_ tlvs: [GoFITSettingTLV]) -> (GoFITStatus, [UInt8]) {
        guard !tlvs.isEmpty else { return (.settingFormatError, []) }
        var decoded: [GoFITSetting] = []
        for tlv in tlvs {
            do {
                decoded.append(try GoFITSetting(tlv: tlv))
            } catch {
                return (Self.status(for: error), [])
            }
        }
        for setting in decoded { settings[setting.id] = setting }
        counters.settingsWrites += 1
        return (.ok, [])
    }

    private mutating func randomBytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
    }
}

extension String {
    /// Zeros in front up to `length` characters: `"42"` → `"0042"`.
    fileprivate func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - count)) + self
    }
}
