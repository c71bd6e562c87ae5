import Wearables

extension FuzzTarget {
    /// GoFIT's vendor frames (CRC, segments), requests, responses and events, the payloads of pairing, identity
    /// and history, every history record kind, and the settings TLVs.
    static let goFIT = FuzzTarget(
        name: "gofit",
        summary: "GoFIT: frames, segments, requests, responses, events, pairing, history pages and records, settings"
    ) { bytes in
        for frame in vendorFrames(bytes) + reassembled(bytes).flatMap(vendorFrames) {
            _ = try? GoFITRequest(frame: frame)
            _ = try? GoFITResponse(frame: frame)
            _ = try? GoFITEvent(frame: frame)
        }
        checkPayloads(bytes)
        for kind in GoFITHistoryKind.allCases {
            if let record = try? GoFITHistoryRecord(decoding: bytes, kind: kind) {
                expectStable(record, { $0.encoded() }, { try GoFITHistoryRecord(decoding: $0, kind: kind) }, "\(kind) record")
            }
        }
        if let list = try? GoFITSettingTLV.decodeList(bytes) {
            precondition(GoFITSettingTLV.encode(list) == bytes, "settings TLVs re-encode differently")
            for tlv in list {
                guard let setting = try? GoFITSetting(tlv: tlv) else { continue }
                expectStable(setting, { $0.tlv().value }, { try GoFITSetting(tlv: GoFITSettingTLV(id: tlv.id, value: $0)) },
                             "setting \(tlv.id)")
            }
        }
    }
}

private func checkPayloads(_ bytes: [UInt8]) {
    if let value = try? GoFITPairingStarted(decoding: bytes) {
        expectStable(value, { $0.encoded() }, { try GoFITPairingStarted(decoding: $0) }, "GoFITPairingStarted")
    }
    if let value = try? GoFITPairingKey(decoding: bytes) {
        expectStable(value, { $0.encoded() }, { try GoFITPairingKey(decoding: $0) }, "GoFITPairingKey")
    }
    if let value = try? GoFITChallenge(decoding: bytes) {
        expectStable(value, { $0.encoded() }, { try GoFITChallenge(decoding: $0) }, "GoFITChallenge")
    }
    if let value = try? GoFITIdentity(decoding: bytes) {
        expectStable(value, { $0.encoded() }, { try GoFITIdentity(decoding: $0) }, "GoFITIdentity")
    }
    if let value = try? GoFITHistoryOpened(decoding: bytes) {
        expectStable(value, { $0.encoded() }, { try GoFITHistoryOpened(decoding: $0) }, "GoFITHistoryOpened")
    }
    if let value = try? GoFITHistoryPage(decoding: bytes) {
        expectStable(value, { $0.encoded() }, { try GoFITHistoryPage(decoding: $0) }, "GoFITHistoryPage")
    }
    if let value = try? GoFITHistoryStatus(decoding: bytes) {
        expectStable(value, { $0.encoded() }, { try GoFITHistoryStatus(decoding: $0) }, "GoFITHistoryStatus")
    }
}
