/// `request/music`: what is playing, for the watch's music app. Any subset of
/// `{"artist","track","album","playing","position_s","length_s","track_number","track_total","speed","repeat","shuffle"}`;
/// each present field is one write to its characteristic of the music service, in the order the watch shows them
/// best (status first, so the play/pause button is right before the text arrives).
///
/// Texts are fitted to the watch's 40 bytes by `InfiniTimeMusicText` ("..." where cut, reported in `truncated`);
/// numbers are seconds, counts and a playback rate (1.0 = normal), refused outside 0…2³¹−1 (the firmware reads a
/// signed 32-bit big-endian number).
public struct InfiniTimeMusicRequest: Sendable, Equatable {
    public static let fields = ["playing", "artist", "track", "album", "position_s", "length_s", "track_number",
                                "track_total", "speed", "repeat", "shuffle"]

    public let writes: [InfiniTimeCharacteristicWrite]
    /// Text fields the watch shows shortened.
    public let truncated: [String]

    public init(_ reader: RequestReader) throws(CommandError) {
        try reader.rejectUnknownFields(allowed: Self.fields, request: "music")
        typealias UUID = InfiniTimeUUID.Characteristic
        var writes: [InfiniTimeCharacteristicWrite] = []
        var truncated: [String] = []
        if let playing = try reader.bool("playing") {
            let status: InfiniTimeMusicStatus = playing ? .playing : .notPlaying
            writes.append(.init(UUID.musicStatus, status.encode(), field: "playing"))
        }
        for (key, uuid) in [("artist", UUID.musicArtist), ("track", UUID.musicTrack), ("album", UUID.musicAlbum)] {
            guard let text = try reader.string(key) else { continue }
            if InfiniTimeMusicText.isTruncated(text) { truncated.append(key) }
            writes.append(.init(uuid, InfiniTimeMusicText(text).encode(), field: key))
        }
        let numbers = [("position_s", UUID.musicPosition), ("length_s", UUID.musicTotalLength),
                       ("track_number", UUID.musicTrackNumber), ("track_total", UUID.musicTrackTotal)]
        for (key, uuid) in numbers {
            guard let value = try reader.integer(key, in: 0...Int64(Int32.max)) else { continue }
            let number: InfiniTimeMusicNumber
            do { number = try InfiniTimeMusicNumber(Int(value), field: key) } catch {
                throw .invalid(reader, key, error, got: .integer(value))
            }
            writes.append(.init(uuid, number.encode(), field: key))
        }
        if let value = reader.arguments["speed"] {
            guard let rate = value.number, rate >= 0, rate <= 100 else {
                throw reader.invalid("speed", "must be a playback rate from 0 to 100 (1.0 is normal speed)", got: value)
            }
            do { writes.append(.init(UUID.musicPlaybackSpeed, try InfiniTimeMusicNumber(playbackRate: rate).encode(), field: "speed")) }
            catch { throw .invalid(reader, "speed", error, got: value) }
        }
        for (key, uuid) in [("repeat", UUID.musicRepeat), ("shuffle", UUID.musicShuffle)] {
            guard let flag = try reader.bool(key) else { continue }
            writes.append(.init(uuid, InfiniTimeMusicFlag(flag).encode(), field: key))
        }
        guard !writes.isEmpty else {
            throw CommandError(.invalidValue, "music needs at least one of \(RequestReader.list(Self.fields, conjunction: "and"))")
        }
        self.writes = writes
        self.truncated = truncated
    }
}
