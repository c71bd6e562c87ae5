/// The button pressed on the watch's incoming-call screen, notified (notify only, never read) on the
/// notification event characteristic (`00020001-…`) as one byte. Since InfiniTime 0.13.
///
/// Sources: `InfiniTimeOrg/InfiniTime` `doc/ble.md` ("Notification Event": 0 declined, 1 accepted, 2 muted) and
/// `IncomingCallResponses` in `src/components/ble/AlertNotificationService.h` (sent by `AcceptIncomingCall`,
/// `RejectIncomingCall`, `MuteIncomingCall`); Gadgetbridge's `PineTimeJFSupport.onCharacteristicChanged` reads the
/// same three codes.
public enum InfiniTimeCallResponse: UInt8, Hashable, Sendable, CaseIterable {
    case reject = 0x00
    case answer = 0x01
    case mute = 0x02

    /// Exactly one byte; another code is `unknownIdentifier`, more bytes `truncated`.
    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> InfiniTimeCallResponse {
        var reader = ByteReader(bytes)
        let raw = try reader.readUInt8()
        try reader.expectEnd()
        guard let response = InfiniTimeCallResponse(rawValue: raw) else {
            throw .unknownIdentifier(field: "call response", value: Int(raw))
        }
        return response
    }

    public func encode() -> [UInt8] { [rawValue] }
}
