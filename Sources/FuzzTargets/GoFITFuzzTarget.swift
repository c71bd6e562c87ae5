import Wearables

extension FuzzTarget {
    /// GoFIT's vendor frames (CRC, segments), requests, responses and events, the payloads of pairing, identity
    /// and history, every history record kind, and the settings TLVs.
    static let goFIT = FuzzTarget(
        name: "gofit",
        summary: "GoFIT: frames, segments, requests, responses, events, pairing, history pages and records, settings"
    ) { bytes in
        for frame in allVendorFrames(bytes) {
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
    checkRoundTrip(bytes, GoFITPairingStarted.init(decoding:), { $0.encoded() }, "GoFITPairingStarted")
    checkRoundTrip(bytes, GoFITPairingKey.init(decoding:), { $0.encoded() }, "GoFITPairingKey")
    checkRoundTrip(bytes, GoFITChallenge.init(decoding:), { $0.encoded() }, "GoFITChallenge")
    checkRoundTrip(bytes, GoFITIdentity.init(decoding:), { $0.encoded() }, "GoFITIdentity")
    checkRoundTrip(bytes, GoFITHistoryOpened.init(decoding:), { $0.encoded() }, "GoFITHistoryOpened")
    checkRoundTrip(bytes, GoFITHistoryPage.init(decoding:), { $0.encoded() }, "GoFITHistoryPage")
    checkRoundTrip(bytes, GoFITHistoryStatus.init(decoding:), { $0.encoded() }, "GoFITHistoryStatus")
}
