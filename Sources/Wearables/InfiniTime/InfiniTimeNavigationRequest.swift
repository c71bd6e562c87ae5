/// `request/navigation` `{"icon","narrative","distance","progress"}`, any subset: the next maneuver for the watch's
/// navigation app. `icon` must be one of the firmware's names (`InfiniTimeNavigationIcon`: an unknown name would
/// show "fork-left"); `narrative` and `distance` ("50 m") are text fitted to 512 bytes; `progress` is 0…100.
///
/// The watch only offers its navigation app when its resource files are installed (docs/protocols/infinitime.md):
/// without them these values are stored, not shown. The gateway cannot tell, so it does not refuse.
public struct InfiniTimeNavigationRequest: Sendable, Equatable {
    public static let fields = ["icon", "narrative", "distance", "progress"]

    public let writes: [InfiniTimeCharacteristicWrite]
    public let truncated: [String]

    public init(_ reader: RequestReader) throws(CommandError) {
        try reader.rejectUnknownFields(allowed: Self.fields, request: "navigation")
        typealias UUID = InfiniTimeUUID.Characteristic
        var writes: [InfiniTimeCharacteristicWrite] = []
        var truncated: [String] = []
        if let name = try reader.string("icon") {
            guard let icon = InfiniTimeNavigationIcon(rawValue: name) else {
                throw reader.invalid("icon", "must be one of InfiniTime's \(InfiniTimeNavigationIcon.allCases.count) icon names, such as \"turn-left\" or \"arrive\"",
                                     got: .text(name))
            }
            writes.append(.init(UUID.navigationFlags, icon.encode(), field: "icon"))
        }
        for (key, uuid) in [("narrative", UUID.navigationNarrative), ("distance", UUID.navigationManeuverDistance)] {
            guard let text = try reader.string(key) else { continue }
            let fitted = InfiniTimeNavigationText(text)
            if fitted.text != text { truncated.append(key) }
            writes.append(.init(uuid, fitted.encode(), field: key))
        }
        if let percent = try reader.integer("progress", in: 0...100, unit: " %") {
            do { writes.append(.init(UUID.navigationProgress, try InfiniTimeNavigationProgress(percent: Int(percent)).encode(), field: "progress")) }
            catch { throw .invalid(reader, "progress", error, got: .integer(percent)) }
        }
        guard !writes.isEmpty else {
            throw CommandError(.invalidValue, "navigation needs at least one of \(RequestReader.list(Self.fields, conjunction: "and"))")
        }
        self.writes = writes
        self.truncated = truncated
    }
}
