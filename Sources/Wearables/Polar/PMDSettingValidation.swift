/// Why a requested setting cannot be started: the device does not offer it.
public struct PMDSettingRejection: Sendable, Hashable {
    public let type: PMDSettingType
    public let requested: Int
    /// What the device offers for the type, in its order (empty when it offers nothing).
    public let offered: [Int]
}

extension PMDSettings {
    /// The first requested setting (in type order) the device does not offer, or nil when every one is offered.
    ///
    /// What a driver checks before it writes a start request, so an impossible `request/configure` fails with
    /// the setting's name and the values that would work, instead of the device's bare `invalidSampleRate`
    /// after a round trip. A type the device lists no values for offers nothing. The factor is the device's
    /// answer, never a request, so it is not checked; neither is security (offline recordings only).
    public static func validate(requested: PMDSettingSelection, against available: PMDSettings) -> PMDSettingRejection? {
        for type in requested.values.keys.sorted() where type != .factor && type != .security {
            let value = requested.values[type] ?? 0
            if !available[type].contains(value) {
                return PMDSettingRejection(type: type, requested: value, offered: available[type])
            }
        }
        return nil
    }
}
