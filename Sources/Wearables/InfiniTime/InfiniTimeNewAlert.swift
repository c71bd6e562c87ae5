/// A notification for the watch, written to New Alert (0x2A46) in InfiniTime's layout: category, count, one byte
/// the firmware skips, then the title, a NUL and the body — at most 99 text bytes kept.
///
/// Sources: `InfiniTimeOrg/InfiniTime` `doc/ble.md` ("New Alert": `<category><amount>\x00<\x00-separated data>`,
/// with itd's `"\x00\x01\x00Test Title\x00Test Body"` and `"\x03\x01\x00Mary"`), and the firmware that reads it:
/// `src/components/ble/AlertNotificationService.cpp` (`OnAlert`: a 3-byte header, a write of 3 bytes or fewer
/// ignored, the text copied into a buffer of `NotificationManager::MessageSize` = 100 bytes with its last byte a
/// NUL — so 99 bytes of text) and `NotificationManager.cpp` (`Title()` is the text before the first NUL, `Message()`
/// the text after it; without a NUL there is no title and the watch shows "Notification"). A call shows
/// "Incoming call from" and the body (`src/displayapp/screens/Notifications.cpp`), so a call's caller goes in the
/// body and its title is left out, as itd does.
///
/// The standard New Alert (Alert Notification Service 1.0) has no third header byte and 18 bytes of text; this is
/// InfiniTime's own reading of the characteristic, not the SIG's.
public struct InfiniTimeNewAlert: Hashable, Sendable {
    /// Text bytes the watch keeps after the header (title, separator and body together).
    public static let maximumTextByteCount = 99
    public static let headerByteCount = 3
    /// The most a title keeps when title and body together do not fit: the body, which the watch shows in the
    /// large area below, gets the rest.
    public static let maximumFittedTitleByteCount = 49
    static let marker = "..."

    public let category: InfiniTimeAlertCategory
    /// "Number of new alerts" in the SIG's layout; InfiniTime ignores it, itd and Gadgetbridge send 1.
    public let count: UInt8
    /// Shown as the notification's heading; nil sends no separator and the watch shows "Notification".
    public let title: String?
    public let body: String

    /// A notification fitted to the watch: NUL characters dropped; when title, separator and body exceed 99
    /// bytes, the title keeps at most 49 bytes and the body the rest, each shortened between characters and
    /// ending "..." when cut. Throws `outOfRange` of the text length when there is no text at all (no title and
    /// an empty body), which the firmware would ignore.
    public init(category: InfiniTimeAlertCategory, title: String?, body: String, count: UInt8 = 1) throws(GATTCodecError) {
        let limit = Self.maximumTextByteCount
        var fittedTitle = title.map { InfiniTimeText.fitted($0, maximumByteCount: limit - 1, marker: Self.marker) }
        var fittedBody = InfiniTimeText.fitted(body, maximumByteCount: limit, marker: Self.marker)
        if let heading = fittedTitle {
            if heading.utf8.count + 1 + fittedBody.utf8.count > limit {
                let titleBudget = min(heading.utf8.count, Self.maximumFittedTitleByteCount)
                fittedTitle = InfiniTimeText.fitted(heading, maximumByteCount: titleBudget, marker: Self.marker)
            }
            let bodyBudget = limit - 1 - (fittedTitle?.utf8.count ?? 0)
            fittedBody = InfiniTimeText.fitted(fittedBody, maximumByteCount: bodyBudget, marker: Self.marker)
        }
        guard fittedTitle != nil || !fittedBody.isEmpty else {
            throw .outOfRange(field: "notification text length", value: 0)
        }
        self.init(verbatim: category, count: count, title: fittedTitle, body: fittedBody)
    }

    private init(verbatim category: InfiniTimeAlertCategory, count: UInt8, title: String?, body: String) {
        self.category = category
        self.count = count
        self.title = title
        self.body = body
    }

    /// What the watch would show: a write of 3 bytes or fewer is `truncated` (the firmware ignores it); an
    /// unlisted category is `unknownIdentifier`; text past 99 bytes is dropped as the firmware drops it; the body
    /// ends at a second NUL; text that is not UTF-8 is `invalidUTF8`.
    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> InfiniTimeNewAlert {
        // The firmware's own test (`packetLen <= headerSize`): the header alone is no notification.
        guard bytes.count > headerByteCount else { throw .truncated(expected: headerByteCount + 1, actual: bytes.count) }
        var reader = ByteReader(bytes)
        let rawCategory = try reader.readUInt8()
        let count = try reader.readUInt8()
        _ = try reader.readUInt8()
        guard let category = InfiniTimeAlertCategory(rawValue: rawCategory) else {
            throw .unknownIdentifier(field: "alert category", value: Int(rawCategory))
        }
        let text = try reader.readBytes(reader.remainingCount).prefix(maximumTextByteCount)
        guard let separator = text.firstIndex(of: 0) else {
            return InfiniTimeNewAlert(verbatim: category, count: count, title: nil, body: try InfiniTimeText.decode(text))
        }
        let title = try InfiniTimeText.decode(text[..<separator])
        let body = try InfiniTimeText.decode(text[(separator + 1)...])
        return InfiniTimeNewAlert(verbatim: category, count: count, title: title, body: body)
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(category.rawValue)
        writer.write(count)
        writer.write(UInt8(0))
        if let title {
            writer.write(contentsOf: title.utf8)
            writer.write(UInt8(0))
        }
        writer.write(contentsOf: body.utf8)
        return writer.bytes
    }
}
