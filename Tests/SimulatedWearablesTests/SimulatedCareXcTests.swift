import Foundation
import Synchronization
import Testing
import Wear2MQTTTesting

@testable import Wearables
@testable import SimulatedWearables

/// A host's view of a `GoFITBandEngine`: requests built with `GoFITRequest`, cut into 20-byte segments as the
/// driver writes them, and the band's answer put back together and decoded with the same codecs.
struct BandUnderTest {
    var engine: GoFITBandEngine
    var sequence: UInt8 = 0
    /// 2026-11-22 04:00 UTC, the pairing time of docs/protocols/gofit.md's example frames.
    var now: UInt32 = 1_795_320_000

    static let identity = GoFITIdentity(productID: SimulatedCareXc.productID, mac: [0xC0, 0xF1, 0x70, 0, 0, 1])

    init(history: [GoFITHistoryRecord] = [], pairingKey: [UInt8]? = nil, seed: UInt64 = 11) {
        engine = GoFITBandEngine(seed: seed, identity: Self.identity, history: history, pairingKey: pairingKey)
    }

    /// Writes the frame's segments and answers the segments the band notified.
    mutating func exchange(_ frame: VendorFrame) -> [[UInt8]] {
        FrameSegmenter.segments(of: frame.encoded()).flatMap { engine.receive($0, now: now) }
    }

    /// Sends `request` with the next sequence number, or `sequence` to repeat one; the band's one response.
    mutating func send(_ request: GoFITRequest, sequence repeated: UInt8? = nil) throws -> GoFITResponse {
        try send(request.frame(sequence: repeated ?? nextSequence()))
    }

    mutating func send(_ frame: VendorFrame) throws -> GoFITResponse {
        try Self.response(from: exchange(frame))
    }

    mutating func nextSequence() -> UInt8 {
        defer { sequence &+= 1 }
        return sequence
    }

    static func response(from segments: [[UInt8]]) throws -> GoFITResponse {
        #expect(segments.allSatisfy { $0.count <= FrameSegmenter.defaultSegmentSize })
        var reassembler = FrameReassembler()
        let frames = segments.compactMap { reassembler.append($0) }
        try #require(frames.count == 1, "one response, got \(frames.count) frames from \(segments.count) segments")
        return try GoFITResponse(frame: VendorFrame(decoding: frames[0]))
    }

    /// Pairs with the code on the display; answers the key.
    mutating func pair() throws -> [UInt8] {
        let started = try GoFITPairingStarted(decoding: send(.pairStart).data)
        let code = try #require(engine.pairingCode(at: now))
        let confirmed = try send(.pairConfirm(code: code, pairingTime: started.pairingTime))
        try #require(confirmed.status == .ok)
        return try GoFITPairingKey(decoding: confirmed.data).key
    }

    /// A new connection that proves `key`; answers the proof's status.
    @discardableResult
    mutating func reconnect(proving key: [UInt8]) throws -> GoFITStatus {
        engine.connectionEnded()
        sequence = 0
        let nonce = try GoFITChallenge(decoding: send(.authChallenge).data).nonce
        return try send(.authProof(GoFITAuthentication.proof(key: key, nonce: nonce))).status
    }
}

/// The simulated GOLiFE Care-Xc: the band's protocol engine through whole frames, the generated history, and the
/// peripheral around them (docs/protocols/gofit.md, docs/simulator.md).
@Suite("Simulated Care-Xc")
struct SimulatedCareXcTests {
    static let request = BluetoothUUID(string: GoFITUUID.request)!
    static let response = BluetoothUUID(string: GoFITUUID.response)!
    static let service = BluetoothUUID(string: GoFITUUID.service)!
    static let address = "C0:F1:70:00:00:01"
    /// Two days ending 2026-11-22 04:00 UTC (noon in the wearer's UTC+8).
    static let twoDays = GoFITSimulatedHistory(days: 2, end: 1_795_320_000, seed: 5)

    // MARK: Frames as the protocol page shows them

    @Test("the band's answers are byte for byte the example frames of the protocol page")
    func exampleFrames() throws {
        var band = BandUnderTest()
        band.sequence = 5
        let started = band.exchange(GoFITRequest.pairStart.frame(sequence: 5))
        #expect(started == [[0x80, 0x81, 0x05, 0x05, 0x00, 0x0A, 0xC0, 0x68, 0x02, 0x6B, 0x95, 0x01]])
        let code = try #require(band.engine.pairingCode(at: band.now))
        let wrong = String(format: "%04d", ((Int(code) ?? 0) + 1) % 10_000)
        let refused = band.exchange(GoFITRequest.pairConfirm(code: wrong, pairingTime: 1_795_320_000).frame(sequence: 6))
        #expect(refused == [[0x80, 0x82, 0x06, 0x01, 0x00, 0x0E, 0x38, 0x86]])

        var paired = BandUnderTest(pairingKey: SimulatedCareXc.presetKey)
        try paired.reconnect(proving: SimulatedCareXc.presetKey)
        #expect(paired.exchange(GoFITRequest.findBand(vibrations: 3).frame(sequence: 7))
            == [[0x80, 0xB0, 0x07, 0x01, 0x00, 0x0A, 0x65, 0xF8]])
        #expect(paired.engine.findPhoneEvent() == [[0x80, 0xE0, 0x00, 0x00, 0x00, 0x2A, 0x00]])
        #expect(paired.engine.findPhoneEvent() == FrameSegmenter.segments(of: GoFITEvent.findPhone.frame(sequence: 1).encoded()))
    }

    // MARK: Pairing and authentication

    @Test("a wrong code is 14, the third wrong code ends the pairing (then 15), the right code gives a key")
    func pairing() throws {
        var band = BandUnderTest()
        #expect(try band.send(.pairConfirm(code: "1234", pairingTime: band.now)).status == .pairingCodeNotFound,
                "no code shown yet")
        let time = try GoFITPairingStarted(decoding: band.send(.pairStart).data).pairingTime
        #expect(time == band.now)
        let code = try #require(band.engine.pairingCode(at: band.now))
        #expect(code.count == 4 && code.allSatisfy(\.isNumber))
        let wrong = String(format: "%04d", ((Int(code) ?? 0) + 5000) % 10_000)
        #expect(try band.send(.pairConfirm(code: code, pairingTime: time + 1)).status == .pairingCodeNotFound,
                "another pairing time")
        #expect(try band.send(.pairConfirm(code: wrong, pairingTime: time)).status == .pairingFailed)
        #expect(try band.send(.pairConfirm(code: wrong, pairingTime: time)).status == .pairingFailed)
        #expect(band.engine.pairingCode(at: band.now) == code, "two wrong tries leave the code shown")
        #expect(try band.send(.pairConfirm(code: wrong, pairingTime: time)).status == .pairingFailed)
        #expect(band.engine.pairingCode(at: band.now) == nil, "the third wrong try ends the pairing")
        #expect(try band.send(.pairConfirm(code: code, pairingTime: time)).status == .pairingCodeNotFound)
        #expect(band.engine.pairingKey == nil)

        let again = try GoFITPairingStarted(decoding: band.send(.pairStart).data).pairingTime
        let newCode = try #require(band.engine.pairingCode(at: band.now))
        let confirmed = try band.send(.pairConfirm(code: newCode, pairingTime: again))
        #expect(confirmed.status == .ok)
        let key = try GoFITPairingKey(decoding: confirmed.data).key
        #expect(band.engine.pairingKey == key)
        #expect(band.engine.isAuthenticated)
        #expect(band.engine.pairingCode(at: band.now) == nil)
        #expect(try band.send(.findBand(vibrations: 1)).status == .ok, "pairing authenticates the connection")
    }

    @Test("the code shows for 120 s; a new pairing replaces the old key")
    func codeExpiryAndRepairing() throws {
        var band = BandUnderTest()
        let time = try GoFITPairingStarted(decoding: band.send(.pairStart).data).pairingTime
        let code = try #require(band.engine.pairingCode(at: band.now))
        #expect(band.engine.pairingCode(at: band.now + 120) == code)
        band.now += 121
        #expect(band.engine.pairingCode(at: band.now) == nil)
        #expect(try band.send(.pairConfirm(code: code, pairingTime: time)).status == .pairingCodeNotFound)

        let first = try band.pair()
        let second = try band.pair()
        #expect(first.count == 16 && second.count == 16 && first != second)
        #expect(try band.reconnect(proving: first) == .authorizationNeeded, "the band now holds the second key")
        #expect(try band.reconnect(proving: second) == .ok)
    }

    @Test("AUTH_PROOF: the right proof authenticates, a wrong one is 23, none without a key is 22")
    func authentication() throws {
        var unpaired = BandUnderTest()
        #expect(try unpaired.send(.findBand(vibrations: 2)).status == .pairingNeeded)
        #expect(try unpaired.send(.settingsRead(ids: [])).status == .pairingNeeded)
        #expect(try unpaired.send(.authChallenge).status == .ok, "a challenge is answered even unpaired")
        #expect(try unpaired.send(.authProof(Array(repeating: 0, count: 16))).status == .pairingNeeded)
        #expect(try unpaired.send(.identity).data == BandUnderTest.identity.encoded(), "IDENTITY needs no pairing")

        let key = SimulatedCareXc.presetKey
        var band = BandUnderTest(pairingKey: key)
        #expect(try band.send(.findBand(vibrations: 2)).status == .authorizationNeeded, "not authenticated yet")
        #expect(try band.send(.authProof(GoFITAuthentication.proof(key: key, nonce: []))).status == .authorizationNeeded,
                "a proof without a challenge")
        let nonce = try GoFITChallenge(decoding: band.send(.authChallenge).data).nonce
        let otherKey = Array(key.reversed())
        #expect(try band.send(.authProof(GoFITAuthentication.proof(key: otherKey, nonce: nonce))).status == .authorizationNeeded)
        #expect(try band.send(.authProof(GoFITAuthentication.proof(key: key, nonce: nonce))).status == .authorizationNeeded,
                "a nonce is good for one proof")
        #expect(try band.reconnect(proving: key) == .ok)
        #expect(try band.send(.findBand(vibrations: 2)).status == .ok)
        #expect(band.engine.counters.vibrations == 2)

        band.engine.connectionEnded()
        #expect(try band.send(.findBand(vibrations: 2)).status == .authorizationNeeded, "authentication ends with the link")
        #expect(band.engine.counters.vibrations == 2)
        let nonces = try (0..<3).map { _ in try GoFITChallenge(decoding: band.send(.authChallenge).data).nonce }
        #expect(Set(nonces).count == 3)
    }

    // MARK: Commands

    @Test("FIND_BAND vibrates 1–10 times; 0 or 11 is 18; a payload of the wrong length is 18")
    func findBand() throws {
        var band = BandUnderTest(pairingKey: SimulatedCareXc.presetKey)
        try band.reconnect(proving: SimulatedCareXc.presetKey)
        #expect(try band.send(.findBand(vibrations: 10)).status == .ok)
        #expect(try band.send(.findBand(vibrations: 0)).status == .settingFormatError)
        #expect(try band.send(.findBand(vibrations: 11)).status == .settingFormatError)
        let long = VendorFrame(opcode: GoFITOpcode.findBand.rawValue, sequence: band.nextSequence(), payload: [3, 0])
        #expect(try band.send(long).status == .settingFormatError)
        #expect(band.engine.counters.vibrations == 10)
    }

    @Test("a repeated sequence number gets the same answer without running again: one find vibrates once")
    func retransmission() throws {
        var band = BandUnderTest(pairingKey: SimulatedCareXc.presetKey)
        try band.reconnect(proving: SimulatedCareXc.presetKey)
        let frame = GoFITRequest.findBand(vibrations: 3).frame(sequence: 40)
        let first = band.exchange(frame)
        let second = band.exchange(frame)
        #expect(first == second && !first.isEmpty)
        #expect(band.engine.counters.vibrations == 3)
        #expect(band.engine.frames.retransmissionsAnswered == 1)
        // The same number with another opcode is a new request (*chosen*: a retransmission repeats both).
        #expect(try band.send(.identity, sequence: 40).data == BandUnderTest.identity.encoded())
        #expect(try band.send(.findBand(vibrations: 2), sequence: 41).status == .ok)
        #expect(band.engine.counters.vibrations == 5)
        // A refused request is cached too: a repeated wrong code counts one wrong try.
        let time = try GoFITPairingStarted(decoding: band.send(.pairStart).data).pairingTime
        let code = try #require(band.engine.pairingCode(at: band.now))
        let wrong = GoFITRequest.pairConfirm(code: String(format: "%04d", ((Int(code) ?? 0) + 1) % 10_000), pairingTime: time)
        for _ in 0..<3 { #expect(try band.send(wrong, sequence: 77).status == .pairingFailed) }
        #expect(band.engine.shownCode?.wrongTries == 1)
    }

    @Test("malformed frames and stray segments are dropped unanswered and counted; an unknown opcode is 21")
    func malformedAndUnknown() throws {
        var band = BandUnderTest(pairingKey: SimulatedCareXc.presetKey)
        try band.reconnect(proving: SimulatedCareXc.presetKey)
        var corrupt = GoFITRequest.findBand(vibrations: 3).frame(sequence: 9).encoded()
        corrupt[corrupt.count - 1] ^= 0xFF
        #expect(band.engine.receive([0x80] + corrupt, now: band.now).isEmpty)
        var short = GoFITRequest.findBand(vibrations: 3).frame(sequence: 9).encoded()
        short[2] = 2
        #expect(band.engine.receive([0x80] + short, now: band.now).isEmpty)
        #expect(band.engine.receive([0x03, 0x01], now: band.now).isEmpty, "a segment out of order")
        #expect(band.engine.frames.malformedFrames == 3)
        #expect(band.engine.counters.vibrations == 0)
        #expect(try band.send(.findBand(vibrations: 3), sequence: 9).status == .ok, "the retransmission is answered")

        let raw = band.exchange(VendorFrame(opcode: 0x55, sequence: 3, payload: [1, 2]))
        #expect(FrameSegmenter.segments(of: VendorFrame(opcode: 0xD5, sequence: 3, payload: [21]).encoded()) == raw)
        #expect(band.exchange(VendorFrame(opcode: 0xB0, sequence: 4, payload: [10])).isEmpty, "a response is not a request")
    }

    // MARK: Settings

    @Test("settings start at the factory defaults, read in id order, and write all or nothing")
    func settings() throws {
        var band = BandUnderTest(pairingKey: SimulatedCareXc.presetKey)
        try band.reconnect(proving: SimulatedCareXc.presetKey)
        func read(_ ids: [UInt8] = []) throws -> [GoFITSetting] {
            let response = try band.send(.settingsRead(ids: ids))
            try #require(response.status == .ok)
            return try GoFITSettingTLV.decodeList(response.data).map { tlv throws(GATTCodecError) in try GoFITSetting(tlv: tlv) }
        }
        #expect(try read() == GoFITSetting.factoryDefaults)
        #expect(try read([12, 2, 12]).map(\.id) == [.stepGoal, .language])
        #expect(try band.send(.settingsRead(ids: [2, 17])).status == .notImplemented)

        let written: [GoFITSetting] = [.stepGoal(12_000), .language(.japanese), .timeFormat(.twelveHour)]
        #expect(try band.send(.settingsWrite(written.map { $0.tlv() })).status == .ok)
        #expect(try read([2, 4, 12]) == [.stepGoal(12_000), .timeFormat(.twelveHour), .language(.japanese)])
        #expect(band.engine.counters.settingsWrites == 1)

        // One bad TLV among good ones: 18 and nothing applied.
        let badTimeFormat = GoFITSettingTLV(id: 4, value: [13])
        let mixed = [GoFITSetting.stepGoal(5000).tlv(), badTimeFormat, GoFITSetting.screenLock(true).tlv()]
        #expect(try band.send(.settingsWrite(mixed)).status == .settingFormatError)
        #expect(try band.send(.settingsWrite([GoFITSetting.stepGoal(5000).tlv(), GoFITSettingTLV(id: 2, value: [0x10, 0])]))
            .status == .settingFormatError, "a value of the wrong length")
        #expect(try band.send(.settingsWrite([GoFITSetting.stepGoal(99).tlv()])).status == .settingFormatError)
        #expect(try band.send(.settingsWrite([GoFITSettingTLV(id: 17, value: [1])])).status == .notImplemented)
        #expect(try band.send(.settingsWrite([])).status == .settingFormatError)
        let truncated = VendorFrame(opcode: GoFITOpcode.settingsWrite.rawValue, sequence: band.nextSequence(), payload: [2, 4, 0x40])
        #expect(try band.send(truncated).status == .settingFormatError)
        #expect(try read([2, 4, 16]) == [.stepGoal(12_000), .timeFormat(.twelveHour), .screenLock(false)])
        #expect(band.engine.counters.settingsWrites == 1)
    }

    // MARK: History

    @Test("HISTORY_OPEN pages fixed records by 64 and activities by one; records since ≤ ts ≤ until")
    func historyPages() throws {
        let history = Self.twoDays
        var band = BandUnderTest(history: history.records, pairingKey: SimulatedCareXc.presetKey)
        try band.reconnect(proving: SimulatedCareXc.presetKey)
        #expect(band.engine.historyRecordCount == history.records.count)

        let opened = try GoFITHistoryOpened(decoding: band.send(.historyOpen(kind: .steps, since: 0, until: .max)).data)
        #expect(opened == GoFITHistoryOpened(kind: .steps, recordCount: 144, pageCount: 3))
        var steps: [GoFITHistoryRecord] = []
        for page in UInt16(0)..<3 {
            let contents = try GoFITHistoryPage(decoding: band.send(.historyPage(kind: .steps, page: page)).data)
            #expect(contents.page == page)
            #expect(contents.records.count == [64, 64, 16][Int(page)])
            steps += contents.records
        }
        #expect(steps == history.steps.map(GoFITHistoryRecord.steps))
        #expect(try band.send(.historyPage(kind: .steps, page: 3)).status == .settingFormatError)
        #expect(try band.send(.historyPage(kind: .sleep, page: 0)).status == .settingFormatError, "not the open kind")

        let activities = try GoFITHistoryOpened(decoding: band.send(.historyOpen(kind: .activity, since: 0, until: .max)).data)
        #expect(activities.recordCount == UInt32(history.activities.count))
        #expect(activities.pageCount == UInt16(history.activities.count))
        let first = try GoFITHistoryPage(decoding: band.send(.historyPage(kind: .activity, page: 0)).data)
        #expect(first.records == [.activity(history.activities[0])])

        let middle = history.heartRate[10].timestamp
        let window = try GoFITHistoryOpened(decoding: band.send(.historyOpen(kind: .heartRate, since: middle,
                                                                             until: middle + 1200)).data)
        #expect(window.recordCount == 3, "both ends included")
        let empty = try GoFITHistoryOpened(decoding: band.send(.historyOpen(kind: .heartRate, since: 10, until: 5)).data)
        #expect(empty.recordCount == 0 && empty.pageCount == 0)
        let unknownKind = VendorFrame(opcode: GoFITOpcode.historyOpen.rawValue, sequence: band.nextSequence(),
                                     payload: [9, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(try band.send(unknownKind).status == .notImplemented)
    }

    @Test("pages are acknowledged in order once read; one transfer at a time; the link dropping closes it")
    func historyAcknowledgements() throws {
        var band = BandUnderTest(history: Self.twoDays.records, pairingKey: SimulatedCareXc.presetKey)
        try band.reconnect(proving: SimulatedCareXc.presetKey)
        func status(_ kind: GoFITHistoryKind) throws -> GoFITHistoryStatus.Entry {
            try #require(GoFITHistoryStatus(decoding: band.send(.historyStatus).data).entry(for: kind))
        }
        let before = try status(.heartRate)
        #expect(before.stored == 288 && before.unacknowledged == 288)
        #expect(before.oldest == Self.twoDays.heartRate.first?.timestamp && before.newest == Self.twoDays.heartRate.last?.timestamp)

        _ = try band.send(.historyOpen(kind: .heartRate, since: 0, until: .max))
        #expect(try band.send(.historyAck(kind: .heartRate, page: 0)).status == .settingFormatError, "not read yet")
        _ = try band.send(.historyPage(kind: .heartRate, page: 0))
        _ = try band.send(.historyPage(kind: .heartRate, page: 1))
        #expect(try band.send(.historyAck(kind: .heartRate, page: 1)).status == .settingFormatError, "out of order")
        let ack = GoFITRequest.historyAck(kind: .heartRate, page: 0)
        #expect(try band.send(ack, sequence: 200).status == .ok)
        #expect(try band.send(ack, sequence: 200).status == .ok, "a retransmission answers from the cache")
        #expect(try band.send(ack).status == .settingFormatError, "page 0 is acknowledged already")
        #expect(try band.send(.historyAck(kind: .heartRate, page: 1)).status == .ok)
        #expect(try status(.heartRate).unacknowledged == 288 - 128)

        // A new HISTORY_OPEN replaces the transfer.
        _ = try band.send(.historyOpen(kind: .sleep, since: 0, until: .max))
        #expect(try band.send(.historyPage(kind: .heartRate, page: 2)).status == .settingFormatError)
        #expect(try band.send(.historyPage(kind: .sleep, page: 0)).status == .ok)

        try band.reconnect(proving: SimulatedCareXc.presetKey)
        #expect(try band.send(.historyPage(kind: .sleep, page: 0)).status == .settingFormatError, "closed by the link")
        #expect(try status(.heartRate).unacknowledged == 288 - 128, "acknowledgements survive the link")
    }

    @Test("CLEAR_DATA erases the history only; INITIALISE erases everything and asks for the link to go")
    func clearAndInitialise() throws {
        let key = SimulatedCareXc.presetKey
        var band = BandUnderTest(history: Self.twoDays.records, pairingKey: key)
        try band.reconnect(proving: key)
        #expect(try band.send(.settingsWrite([GoFITSetting.stepGoal(9000).tlv()])).status == .ok)
        #expect(try band.send(.clearData).status == .ok)
        #expect(band.engine.historyRecordCount == 0)
        let cleared = try GoFITHistoryStatus(decoding: band.send(.historyStatus).data)
        #expect(cleared.entries.map(\.kind) == GoFITHistoryKind.allCases)
        #expect(cleared.entries.allSatisfy { $0.stored == 0 && $0.oldest == 0 })
        #expect(band.engine.takeDisconnectRequest() == false)
        #expect(try band.reconnect(proving: key) == .ok, "pairing kept")
        #expect(band.engine.currentSettings.contains(.stepGoal(9000)), "settings kept")

        #expect(try band.send(.initialise).status == .ok)
        let hangsUp = band.engine.takeDisconnectRequest()
        #expect(hangsUp)
        #expect(band.engine.takeDisconnectRequest() == false, "asked once")
        #expect(band.engine.pairingKey == nil)
        #expect(band.engine.currentSettings == GoFITSetting.factoryDefaults)
        #expect(band.engine.counters.initialisations == 1)
        #expect(try band.reconnect(proving: key) == .pairingNeeded)
        #expect(try band.send(.findBand(vibrations: 1)).status == .pairingNeeded)
    }

    // MARK: The generated history

    @Test("a week: a step bucket every 20 minutes, 10-minute pulses and sleep scores 0–5, SpO2, two workouts")
    func weekShape() throws {
        let end: UInt32 = 1_795_320_000
        let week = GoFITSimulatedHistory(days: 7, end: end + 59, seed: 3)
        #expect(week.end == end && week.start == end - 7 * 86_400)
        #expect(week.steps.count == 7 * 72)
        #expect(zip(week.steps, week.steps.dropFirst()).allSatisfy { $1.timestamp - $0.timestamp == 1200 })
        #expect(week.steps.first?.timestamp == week.start)
        #expect(week.heartRate.count == 7 * 144)
        #expect(week.heartRate.allSatisfy { (55...190).contains($0.bpm) })
        #expect(week.spo2.count >= 26 && week.spo2.count <= 30)
        #expect(week.spo2.allSatisfy { (94...99).contains($0.percent) })
        #expect(week.sleep.allSatisfy { $0.score <= 5 && $0.timestamp % 600 == 0 })
        #expect(week.sleep.count >= 6 * 38 && week.sleep.count <= 8 * 54, "6 h 20 min to 9 h a night")
        #expect(Set(week.sleep.map(\.score)).count >= 5, "light and deep sleep")
        #expect(week.records.allSatisfy { (week.start..<week.end).contains($0.timestamp) })

        let local = { (time: UInt32) in Int((time + 8 * 3600) % 86_400) / 3600 }
        let nightSteps = week.steps.filter { (2..<5).contains(local($0.timestamp)) }
        #expect(nightSteps.allSatisfy { $0.steps == 0 && $0.distanceMeters == 0 })
        let workouts = week.activities.map { $0.start - 1200...$0.start + $0.durationSeconds }
        let walking = week.steps.filter { bucket in bucket.steps > 0 && !workouts.contains { $0.contains(bucket.timestamp) } }
        #expect(walking.map(\.steps).reduce(0) { $0 + Int($1) } > 7 * 4000, "a few thousand steps a day")
        for bucket in walking where bucket.steps >= 100 {
            #expect((0.70...0.82).contains(Double(bucket.distanceMeters) / Double(bucket.steps)))
            #expect(abs(Double(bucket.caloriesKcal) - Double(bucket.steps) / 20) <= 1)
        }
        let deepEarly = week.sleep.filter { $0.score <= 1 }.map { local($0.timestamp) }
        #expect(deepEarly.filter { $0 >= 22 || $0 < 3 }.count > deepEarly.filter { (3..<8).contains($0) }.count,
                "deeper early in the night")
        let asleepPulses = week.heartRate.filter { local($0.timestamp) == 3 }
        #expect(asleepPulses.allSatisfy { (55...70).contains($0.bpm) })

        #expect(week.activities.map(\.typeID) == [GoFITSimulatedSport.ride.rawValue, GoFITSimulatedSport.run.rawValue])
        for activity in week.activities {
            #expect(activity.points.count <= GoFITActivity.maximumPoints && activity.laps.count <= GoFITActivity.maximumLaps)
            #expect(zip(activity.points, activity.points.dropFirst()).allSatisfy {
                $1.timestamp - $0.timestamp == 5 && $1.accumulatedDistanceMeters >= $0.accumulatedDistanceMeters
            })
            #expect(activity.points.last?.timestamp == activity.start + activity.durationSeconds)
            #expect(activity.laps.dropLast().allSatisfy { $0.distanceMeters == 1000 })
            #expect(activity.laps.map(\.distanceMeters).reduce(0, +) == activity.distanceMeters)
            #expect(zip(activity.laps, activity.laps.dropFirst()).allSatisfy { $0.start + $0.durationSeconds == $1.start })
            #expect(activity.laps.first?.start == activity.start)
            #expect(activity.laps.map(\.durationSeconds).reduce(0, +) == activity.durationSeconds)
            #expect(Int(activity.distanceMeters) / 1000 + 1 == activity.laps.count)
            #expect(activity.laps.map(\.steps).reduce(0, +) == activity.steps)
            #expect(activity.points.allSatisfy {
                abs(Double($0.latitudeE7) / 1e7 - 25.03) < 0.05 && abs(Double($0.longitudeE7) / 1e7 - 121.54) < 0.05
            })
            #expect(activity.timeZoneOffsetMinutes == 480)
            let bytes = GoFITHistoryRecord.activity(activity).encoded()
            #expect(try GoFITHistoryRecord(decoding: bytes, kind: .activity) == .activity(activity))
        }
        let ride = try #require(week.activities.first)
        let run = try #require(week.activities.last)
        #expect(run.durationSeconds == 1800 && run.points.count == 361 && (4000...6500).contains(run.distanceMeters))
        #expect(run.steps > 4000 && (140...175).contains(run.averageHeartRate) && run.maximumHeartRate > run.averageHeartRate)
        #expect(ride.durationSeconds == 2700 && ride.steps == 0 && (12_000...20_000).contains(ride.distanceMeters))
        // The run's steps are in the buckets it covers, its pulse in the readings.
        let runBuckets = week.steps.filter { $0.timestamp + 1200 > run.start && $0.timestamp <= run.start + 1800 }
        #expect(runBuckets.map { Int($0.steps) }.reduce(0, +) >= Int(run.steps))
        let warmedUp = week.heartRate.filter { $0.timestamp >= run.start + 300 && $0.timestamp <= run.start + 1800 }
        #expect(warmedUp.count == 3 && warmedUp.allSatisfy { $0.bpm > 110 })
    }

    @Test("the history is deterministic for a seed, differs between seeds, and agrees where windows overlap")
    func historyDeterminism() {
        let end: UInt32 = 1_795_320_000
        #expect(GoFITSimulatedHistory(days: 7, end: end, seed: 9) == GoFITSimulatedHistory(days: 7, end: end, seed: 9))
        #expect(GoFITSimulatedHistory(days: 7, end: end, seed: 9).steps != GoFITSimulatedHistory(days: 7, end: end, seed: 10).steps)
        let week = GoFITSimulatedHistory(days: 7, end: end, seed: 9)
        let day = GoFITSimulatedHistory(days: 1, end: end, seed: 9)
        #expect(Array(week.heartRate.suffix(144)) == day.heartRate)
        #expect(Array(week.steps.suffix(72)) == day.steps)
        #expect(GoFITSimulatedHistory(days: 0, end: end, seed: 9).records.isEmpty)
    }

    // MARK: The peripheral

    /// The clock the band of a test runs on: its battery, its restart, its own clock.
    let clock = ManualClock()

    func band(_ options: [String: SimulationOptionValue] = [:], address: String? = address) throws -> SimulatedCareXc {
        try SimulatedCareXc(clocked(seed: 21, options: ["history_end": .int(1_795_320_000)].merging(options) { $1 },
                                    address: address, clock: clock))
    }

    @Test("registered as gofit_care_xc; advertises \"Care-Xc\" and the vendor service; the GATT table of the doc")
    func table() async throws {
        let kind = try #require(SimulatedDeviceCatalog.kind(named: "gofit_care_xc"))
        let device = try kind.make(SimulatedDeviceConfiguration(seed: 1, address: Self.address))
        #expect(device.advertisement.localName == "Care-Xc" && device.deviceName == "Care-Xc")
        #expect(device.advertisement.serviceUUIDs == [Self.service])
        func flags(_ service: BluetoothUUID) -> [BluetoothUUID: CharacteristicFlags] {
            let found = device.services.first { $0.uuid == service }
            return Dictionary(uniqueKeysWithValues: (found?.characteristics ?? []).map { ($0.uuid, $0.flags) })
        }
        #expect(flags(Self.service) == [Self.request: [.write, .writeWithoutResponse], Self.response: .notify])
        #expect(flags(BluetoothUUID(0x180F)) == [BluetoothUUID(0x2A19): [.read, .notify]])
        #expect(flags(BluetoothUUID(0x1805)) == [BluetoothUUID(0x2A2B): [.read, .write], BluetoothUUID(0x2A0F): [.read, .write]])
        #expect(flags(BluetoothUUID(0x1802)) == [BluetoothUUID(0x2A06): .writeWithoutResponse])

        let band = try band()
        func string(_ uuid: UInt16) async throws -> String { try DeviceInformationString.decode(await band.read(BluetoothUUID(uuid))) }
        #expect(try await string(0x2A29) == "GOLiFE")
        #expect(try await string(0x2A24) == "Care-Xc")
        #expect(try await string(0x2A25) == "CXC0000001")
        #expect(try await string(0x2A27) == "1.0")
        #expect(try await string(0x2A26) == "2.1.0")
        #expect(SimulatedCareXc.serial(address: "AA:BB:CC:12:34:56", seed: 0) == "CXC" + String(0x123456 % 10_000_000))
        #expect(try BatteryLevel.decode(await band.read(BluetoothUUID(0x2A19))).percent == 76)
        await #expect(throws: ATTError.readNotPermitted) { try await band.read(Self.request) }
        #expect(throws: SimulatedDeviceConfigurationError.self) { try self.band(["history_days": .int(99)]) }
        #expect(throws: SimulatedDeviceConfigurationError.self) { try self.band(["pairing_code": .string("1234")]) }
    }

    @Test("writes to Request are answered on Response after the write; the code shows in inspect()")
    func overGATT() async throws {
        let band = try band()
        let link = RecordingPeripheralLink()
        let running = try await run(band, on: link, clock: clock)
        defer { running.cancel() }
        let before = await band.inspect()
        #expect(before["pairing_code"] == "" && before["paired"] == "false" && before["serial"] == "CXC0000001")
        #expect(Int(before["history_records"] ?? "") ?? 0 > 1500, "a week of history")

        for segment in FrameSegmenter.segments(of: GoFITRequest.pairStart.frame(sequence: 0).encoded()) {
            try await band.write(Self.request, value: segment, kind: .request)
        }
        #expect(await link.until { !link.values(of: Self.response).isEmpty })
        let started = try BandUnderTest.response(from: link.values(of: Self.response))
        #expect(started.opcode == .pairStart && started.status == .ok)
        let time = try GoFITPairingStarted(decoding: started.data).pairingTime
        let code = try #require(await band.inspect()["pairing_code"])
        #expect(code.count == 4)

        link.clear()
        for segment in FrameSegmenter.segments(of: GoFITRequest.pairConfirm(code: code, pairingTime: time).frame(sequence: 1).encoded()) {
            try await band.write(Self.request, value: segment, kind: .command)
        }
        #expect(await link.until { link.values(of: Self.response).count == 2 })
        #expect(try BandUnderTest.response(from: link.values(of: Self.response)).status == .ok)
        let after = await band.inspect()
        #expect(after["paired"] == "true" && after["authenticated"] == "true" && after["pairing_code"] == "")

        // Find my phone: the event frame on Response.
        link.clear()
        #expect(await band.handle(.findMyPhone, link: link))
        #expect(await link.until { link.values(of: Self.response) == [[0x80, 0xE0, 0x00, 0x00, 0x00, 0x2A, 0x00]] })
        #expect(await band.handle(.buttonPress, link: link) == false)

        // INITIALISE: answered, then the band hangs up as it restarts.
        link.clear()
        for segment in FrameSegmenter.segments(of: GoFITRequest.initialise.frame(sequence: 2).encoded()) {
            try await band.write(Self.request, value: segment, kind: .request)
        }
        #expect(await link.until { !link.values(of: Self.response).isEmpty })
        #expect(try BandUnderTest.response(from: link.values(of: Self.response)).status == .ok)
        #expect(await clock.sleepers(atLeast: 2), "the battery's timer and the restart's")
        await clock.advance(by: SimulatedCareXc.restartDelay - .milliseconds(1), timers: 2)
        #expect(link.hangUps == 0, "not before the restart delay")
        await clock.advance(by: .milliseconds(1))
        #expect(await link.until { link.hangUps == 1 })
        #expect(await band.inspect()["paired"] == "false")
        #expect(await band.inspect()["initialised_count"] == "1")
    }

    @Test("drop_after_pages hangs up once, right after that many HISTORY_PAGE answers")
    func dropAfterPages() async throws {
        let band = try band(["paired": .bool(true), "history_days": .int(2), "drop_after_pages": .int(2)])
        let link = RecordingPeripheralLink(mtu: 247)
        let running = try await run(band, on: link, clock: clock)
        defer { running.cancel() }
        var sequence: UInt8 = 0
        func send(_ request: GoFITRequest) async throws -> GoFITResponse {
            link.clear()
            let frame = request.frame(sequence: sequence)
            sequence &+= 1
            for segment in FrameSegmenter.segments(of: frame.encoded()) {
                try await band.write(Self.request, value: segment, kind: .request)
            }
            var response: GoFITResponse?
            _ = await link.until {
                var reassembler = FrameReassembler()
                response = link.values(of: Self.response).compactMap { reassembler.append($0) }.first
                    .flatMap { try? GoFITResponse(frame: VendorFrame(decoding: $0)) }
                return response != nil
            }
            return try #require(response)
        }
        func authenticate() async throws {
            let nonce = try GoFITChallenge(decoding: await send(.authChallenge).data).nonce
            #expect(try await send(.authProof(GoFITAuthentication.proof(key: SimulatedCareXc.presetKey, nonce: nonce))).status == .ok)
            #expect(try await send(.historyOpen(kind: .heartRate, since: 0, until: .max)).status == .ok)
        }
        try await authenticate()
        let first = try await send(.historyPage(kind: .heartRate, page: 0))
        #expect(first.status == .ok)
        #expect(link.values(of: Self.response).allSatisfy { $0.count <= 244 } && link.values(of: Self.response).count == 2,
                "a page of 64 pulses in 244-byte segments at an MTU of 247")
        #expect(link.hangUps == 0)
        #expect(try await send(.historyPage(kind: .heartRate, page: 1)).status == .ok)
        #expect(await link.until { link.hangUps == 1 })

        // The host reconnects and reads on: the band does not drop the link again.
        running.cancel()
        await running.value
        #expect(await !band.isConnected)
        let again = try await run(band, on: link, clock: clock)
        defer { again.cancel() }
        try await authenticate()
        for page in UInt16(0)..<5 {
            #expect(try await send(.historyPage(kind: .heartRate, page: page)).status == .ok)
        }
        #expect(link.hangUps == 1, "once")
    }

    @Test("Current Time answers the time written, advanced; Alert Level writes are counted")
    func standardServices() async throws {
        let band = try band()
        let written = try CurrentTime(year: 2026, month: 11, day: 22, hours: 12, minutes: 0, seconds: 58, dayOfWeek: 7,
                                      adjustReason: [.manualTimeUpdate])
        try await band.write(BluetoothUUID(0x2A2B), value: written.encode(), kind: .request)
        await clock.advance(by: .milliseconds(2100))
        let read = try CurrentTime.decode(await band.read(BluetoothUUID(0x2A2B)))
        // Advanced by the time that passed: 12:00:58 and 2.1 s.
        let advanced = (Int(read.dateTime.hours) - 12) * 3600 + Int(read.dateTime.minutes) * 60 + Int(read.dateTime.seconds) - 58
        #expect(advanced == 2 && read.fractions256 == 25, "advanced \(advanced) s and \(read.fractions256)/256")
        #expect(read.adjustReason == [.manualTimeUpdate])
        await #expect(throws: ATTError.invalidAttributeValueLength) {
            try await band.write(BluetoothUUID(0x2A2B), value: [1, 2, 3], kind: .request)
        }
        #expect(try await band.read(BluetoothUUID(0x2A0F)) == [32, 0])
        try await band.write(BluetoothUUID(0x2A0F), value: [4, 0], kind: .request)
        #expect(try await band.read(BluetoothUUID(0x2A0F)) == [4, 0])

        try await band.write(BluetoothUUID(0x2A06), value: AlertLevel.high.encode(), kind: .command)
        try await band.write(BluetoothUUID(0x2A06), value: [9], kind: .command)
        let seen = await band.inspect()
        #expect(seen["alerts"] == "1" && seen["alert_level"] == "high")
    }
}
