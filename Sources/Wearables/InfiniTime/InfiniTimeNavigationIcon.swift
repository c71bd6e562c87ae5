/// The maneuver icon the watch's navigation app shows, written to the flags characteristic (`00010001-…`) as its
/// name in ASCII.
///
/// The names are the keys of `iconMap` in `InfiniTimeOrg/InfiniTime` `src/displayapp/screens/Navigation.cpp` (86 of
/// them, from pure-maps / Mapbox "direction-icons"). `doc/NavigationService.md` lists nearly the same set but
/// spells "turn-stright" and names five the firmware does not map ("depart", "fork", "off-ramp-sharp-left",
/// "off-ramp-sharp-right", "off-ramp-straight"); the firmware's list wins. A name
/// the firmware does not know shows the icon at `flagIndex` (18), which is "fork-left", so the encoder only
/// takes these names. The icons are images in the watch's resource files (`/images/navigation0.bin`,
/// `navigation1.bin`): without them the navigation app is not offered at all (`Navigation::IsAvailable`).
public enum InfiniTimeNavigationIcon: String, Hashable, Sendable, CaseIterable {
    case arriveLeft = "arrive-left"
    case arriveRight = "arrive-right"
    case arriveStraight = "arrive-straight"
    case arrive = "arrive"
    case close = "close"
    case continueLeft = "continue-left"
    case continueRight = "continue-right"
    case continueSlightLeft = "continue-slight-left"
    case continueSlightRight = "continue-slight-right"
    case continueStraight = "continue-straight"
    case continueUturn = "continue-uturn"
    case `continue` = "continue"
    case departLeft = "depart-left"
    case departRight = "depart-right"
    case departStraight = "depart-straight"
    case endOfRoadLeft = "end-of-road-left"
    case endOfRoadRight = "end-of-road-right"
    case ferry = "ferry"
    case flag = "flag"
    case forkLeft = "fork-left"
    case forkRight = "fork-right"
    case forkSlightLeft = "fork-slight-left"
    case forkSlightRight = "fork-slight-right"
    case forkStraight = "fork-straight"
    case invalid = "invalid"
    case invalidLeft = "invalid-left"
    case invalidRight = "invalid-right"
    case invalidSlightLeft = "invalid-slight-left"
    case invalidSlightRight = "invalid-slight-right"
    case invalidStraight = "invalid-straight"
    case invalidUturn = "invalid-uturn"
    case mergeLeft = "merge-left"
    case mergeRight = "merge-right"
    case mergeSlightLeft = "merge-slight-left"
    case mergeSlightRight = "merge-slight-right"
    case mergeStraight = "merge-straight"
    case newNameLeft = "new-name-left"
    case newNameRight = "new-name-right"
    case newNameSharpLeft = "new-name-sharp-left"
    case newNameSharpRight = "new-name-sharp-right"
    case newNameSlightLeft = "new-name-slight-left"
    case newNameSlightRight = "new-name-slight-right"
    case newNameStraight = "new-name-straight"
    case notificationLeft = "notification-left"
    case notificationRight = "notification-right"
    case notificationSharpLeft = "notification-sharp-left"
    case notificationSharpRight = "notification-sharp-right"
    case notificationSlightLeft = "notification-slight-left"
    case notificationSlightRight = "notification-slight-right"
    case notificationStraight = "notification-straight"
    case offRampLeft = "off-ramp-left"
    case offRampRight = "off-ramp-right"
    case offRampSlightLeft = "off-ramp-slight-left"
    case offRampSlightRight = "off-ramp-slight-right"
    case onRampLeft = "on-ramp-left"
    case onRampRight = "on-ramp-right"
    case onRampSharpLeft = "on-ramp-sharp-left"
    case onRampSharpRight = "on-ramp-sharp-right"
    case onRampSlightLeft = "on-ramp-slight-left"
    case onRampSlightRight = "on-ramp-slight-right"
    case onRampStraight = "on-ramp-straight"
    case rotary = "rotary"
    case rotaryLeft = "rotary-left"
    case rotaryRight = "rotary-right"
    case rotarySharpLeft = "rotary-sharp-left"
    case rotarySharpRight = "rotary-sharp-right"
    case rotarySlightLeft = "rotary-slight-left"
    case rotarySlightRight = "rotary-slight-right"
    case rotaryStraight = "rotary-straight"
    case roundabout = "roundabout"
    case roundaboutLeft = "roundabout-left"
    case roundaboutRight = "roundabout-right"
    case roundaboutSharpLeft = "roundabout-sharp-left"
    case roundaboutSharpRight = "roundabout-sharp-right"
    case roundaboutSlightLeft = "roundabout-slight-left"
    case roundaboutSlightRight = "roundabout-slight-right"
    case roundaboutStraight = "roundabout-straight"
    case turnLeft = "turn-left"
    case turnRight = "turn-right"
    case turnSharpLeft = "turn-sharp-left"
    case turnSharpRight = "turn-sharp-right"
    case turnSlightLeft = "turn-slight-left"
    case turnSlightRight = "turn-slight-right"
    case turnStraight = "turn-straight"
    case updown = "updown"
    case uturn = "uturn"

    /// The name as UTF-8; an unlisted name is `unknownIdentifier` (its value the byte count), text that is not
    /// UTF-8 `invalidUTF8`. The firmware takes the whole write as a C string, so the name ends at a NUL.
    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> InfiniTimeNavigationIcon {
        let name = try InfiniTimeText.decode(bytes)
        guard let icon = InfiniTimeNavigationIcon(rawValue: name) else {
            throw .unknownIdentifier(field: "navigation icon", value: bytes.count)
        }
        return icon
    }

    public func encode() -> [UInt8] { Array(rawValue.utf8) }
}
