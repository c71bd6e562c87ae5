import Wearables
import Firmware

/// The Firmware Revision string (0x2A26) a simulated device reports after a DFU installed an image: the init
/// packet's version number as `major.minor.patch`.
///
/// An init packet carries a number, a Firmware Revision a string; the device's firmware decides how one becomes the
/// other. The simulation takes nrfutil's convention: `nrfutil pkg generate --application-version-string "2.2.0"`
/// packs `major · 10000 + minor · 100 + patch` into `fw_version`, so 20200 reads "2.2.0" and 20203 "2.2.3" (*chosen*:
/// a real band may print its version any way it likes). A Legacy init packet's `application_version` is read the
/// same way. 0xFFFF_FFFF is nrfutil's "no version" (Legacy's default `--application-version`): the device keeps its
/// old version and marks the build, `2.1.0+dfu.1` after the first such install, `2.1.0+dfu.2` after the second.
public enum SimulatedFirmwareRevision {
    /// The number that means "no version".
    public static let unversioned: UInt32 = 0xFFFF_FFFF

    /// `major.minor.patch` of a packed version.
    public static func string(packed version: UInt32) -> String {
        "\(version / 10_000).\(version / 100 % 100).\(version % 100)"
    }

    /// The string after installing an image with `version`; `current` is the string before, `installCount` the
    /// number of installs including this one.
    public static func afterInstalling(version: UInt32, current: String, installCount: Int) -> String {
        guard version == unversioned else { return string(packed: version) }
        let release = current.split(separator: "+", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return "\(release)+dfu.\(installCount)"
    }
}
