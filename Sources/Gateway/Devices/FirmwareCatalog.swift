import Firmware
import Foundation
import Wearables

/// The firmware packages in `dfu.dir`, as `bridge/request/firmware/list` shows them: each package's file, its
/// SHA-256 (what `request/dfu` asks for), its size and, per image, the versions its init packet states. A file that
/// is not a usable package is listed with the reason, so a user sees why it is not offered.
///
/// It reads each package in full to hash and parse it (at most `dfu.max_mb` each), only when asked.
public enum FirmwareCatalog {
    public static func list(_ section: Configuration.DFUSection) -> [DeviceValue] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: section.directory)) ?? []
        return names.filter { $0.lowercased().hasSuffix(".zip") }.sorted().map { entry(name: $0, section: section) }
    }

    static func entry(name: String, section: Configuration.DFUSection) -> DeviceValue {
        let path = (section.directory as NSString).appendingPathComponent(name)
        var object: [String: DeviceValue] = ["file": .text(name)]
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        object["bytes"] = .integer(Int64(size))
        guard size <= section.maxBytes else {
            object["error"] = .text("larger than dfu.max_mb (\(section.maxMegabytes) MiB)")
            return .object(object)
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            object["error"] = .text("cannot be read")
            return .object(object)
        }
        let bytes = [UInt8](data)
        object["sha256"] = .text(DFUPackageFile.sha256(of: bytes))
        do {
            let package = try DFUPackage(data: bytes, maximumSize: section.maxBytes)
            object["images"] = .list(package.images.map(image))
            if let application = package.images.first(where: { $0.kind == .application })?.parsedInit {
                object["firmware"] = .text(versionString(application.firmwareVersion))
            }
        } catch {
            object["error"] = .text(error.message)
        }
        return .object(object)
    }

    static func image(_ image: DFUImage) -> DeviceValue {
        var object: [String: DeviceValue] = ["kind": .text(image.kind.rawValue), "bytes": .integer(Int64(image.firmware.count))]
        if let initPacket = image.parsedInit {
            object["fw_version"] = .integer(Int64(initPacket.firmwareVersion))
            object["hw_version"] = .integer(Int64(initPacket.hardwareVersion))
            object["sd_req"] = .list(initPacket.softDeviceRequired.map { .text("0x" + String($0, radix: 16, uppercase: true)) })
        }
        return .object(object)
    }

    /// nrfutil's `--application-version-string 2.2.0` is stored as 20200 (major·10000 + minor·100 + patch).
    public static func versionString(_ version: UInt32) -> String {
        "\(version / 10_000).\(version / 100 % 100).\(version % 100)"
    }
}
