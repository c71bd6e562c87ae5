/// The first byte of a New Alert: the Bluetooth SIG Alert Category ID (Alert Notification Service, "Category ID").
///
/// Sources: `InfiniTimeOrg/InfiniTime` `doc/ble.md` ("New Alert", the list of categories) and `Categories` in
/// `src/components/ble/AlertNotificationService.h`. InfiniTime 1.16 tells only two apart
/// (`AlertNotificationService::OnAlert`): `call` opens the incoming-call screen with answer, reject and mute
/// buttons (the body is the caller); every other category is shown as a plain notification.
public enum InfiniTimeAlertCategory: UInt8, Hashable, Sendable, CaseIterable {
    case simpleAlert = 0x00
    case email = 0x01
    case news = 0x02
    case call = 0x03
    case missedCall = 0x04
    case smsMms = 0x05
    case voiceMail = 0x06
    case schedule = 0x07
    case highPrioritizedAlert = 0x08
    case instantMessage = 0x09
    /// "All categories" in the SIG's control point; listed by the firmware, meaningless in a New Alert.
    case all = 0xFF
}
