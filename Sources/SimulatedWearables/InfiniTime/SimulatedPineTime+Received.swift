import Wearables

/// How the simulated PineTime files what it is sent: which part of the watch a characteristic is (for
/// `fail_writes`), and a written value as the firmware reads it, for `inspect()`.
extension SimulatedPineTime {
    /// Which `fail_writes` part a characteristic belongs to.
    static func part(of characteristic: BluetoothUUID) -> SimulatedPineTimeOptions.FailingPart? {
        switch characteristic {
        case SimulatedCurrentTime.uuid, localTimeUUID: .time
        case newAlertUUID: .notify
        case custom(UUID.weatherData): .weather
        default:
            if let key = storedKeys[characteristic] { key.hasPrefix("music") ? .music : .navigation } else { nil }
        }
    }

    /// The music and navigation characteristics, by the key `inspect()` shows their value under.
    static let storedKeys: [BluetoothUUID: String] = [
        custom(UUID.musicStatus): "music_playing", custom(UUID.musicArtist): "music_artist",
        custom(UUID.musicTrack): "music_track", custom(UUID.musicAlbum): "music_album",
        custom(UUID.musicPosition): "music_position_s", custom(UUID.musicTotalLength): "music_length_s",
        custom(UUID.musicTrackNumber): "music_track_number", custom(UUID.musicTrackTotal): "music_track_total",
        custom(UUID.musicPlaybackSpeed): "music_speed_percent", custom(UUID.musicRepeat): "music_repeat",
        custom(UUID.musicShuffle): "music_shuffle",
        custom(UUID.navigationFlags): "navigation_icon", custom(UUID.navigationNarrative): "navigation_narrative",
        custom(UUID.navigationManeuverDistance): "navigation_distance", custom(UUID.navigationProgress): "navigation_progress",
    ]

    /// A written value as the watch reads it, through the same codecs; what it cannot read shows as "invalid".
    static func describe(_ characteristic: BluetoothUUID, _ value: [UInt8]) -> String {
        switch characteristic {
        case custom(UUID.musicStatus):
            return (try? InfiniTimeMusicStatus.decode(value)).map { $0 == .playing ? "true" : "false" } ?? "invalid"
        case custom(UUID.musicArtist), custom(UUID.musicTrack), custom(UUID.musicAlbum):
            return (try? InfiniTimeMusicText.decode(value))?.text ?? "invalid"
        case custom(UUID.musicPosition), custom(UUID.musicTotalLength), custom(UUID.musicTrackNumber),
             custom(UUID.musicTrackTotal), custom(UUID.musicPlaybackSpeed):
            return (try? InfiniTimeMusicNumber.decode(value)).map { String($0.value) } ?? "invalid"
        case custom(UUID.musicRepeat), custom(UUID.musicShuffle):
            return (try? InfiniTimeMusicFlag.decode(value)).map { String($0.isOn) } ?? "invalid"
        case custom(UUID.navigationFlags):
            return String(validating: value, as: UTF8.self).flatMap { InfiniTimeNavigationIcon(rawValue: $0)?.rawValue } ?? "fork-left"
        case custom(UUID.navigationProgress):
            return (try? InfiniTimeNavigationProgress.decode(value)).map { String($0.percent) } ?? "invalid"
        default:
            return (try? InfiniTimeNavigationText.decode(value))?.text ?? "invalid"
        }
    }
}
