/// The release a PineTime runs, from its Firmware Revision string ("1.16.0"), and what that release can do over
/// BLE: the driver asks this rather than comparing numbers itself.
///
/// Versions come from `git tag --contains` on the commit that added each piece (docs/protocols/infinitime.md):
/// Local Time Information since 1.12.0, Simple Weather since 1.14.0, its sunrise/sunset (message version 1) since
/// 1.16.0. A revision that does not parse (a development build's own string) is `nil`; the driver then trusts
/// the GATT table alone and sends weather version 0, which every release with Simple Weather reads.
public struct InfiniTimeFirmwareVersion: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let major: Int
    public let minor: Int
    public let patch: Int

    public init(major: Int, minor: Int, patch: Int) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

    /// "1.16.0", "1.16", "v1.16.0" or "1.16.0-rc1": the leading numbers; nil when there are none.
    public init?(revision: String) {
        var text = Substring(revision)
        if text.first == "v" || text.first == "V" { text = text.dropFirst() }
        let numbers = text.prefix { $0.isNumber || $0 == "." }.split(separator: ".", omittingEmptySubsequences: false)
        guard numbers.count >= 2, numbers.count <= 3,
              let major = Int(numbers[0]), let minor = Int(numbers[1]) else { return nil }
        let patch = numbers.count == 3 ? Int(numbers[2]) : 0
        guard let patch else { return nil }
        self.init(major: major, minor: minor, patch: patch)
    }

    public static let localTimeInformation = InfiniTimeFirmwareVersion(major: 1, minor: 12, patch: 0)
    public static let simpleWeather = InfiniTimeFirmwareVersion(major: 1, minor: 14, patch: 0)
    public static let weatherSunTimes = InfiniTimeFirmwareVersion(major: 1, minor: 16, patch: 0)

    public static func < (lhs: InfiniTimeFirmwareVersion, rhs: InfiniTimeFirmwareVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }

    public var description: String { "\(major).\(minor).\(patch)" }
}
