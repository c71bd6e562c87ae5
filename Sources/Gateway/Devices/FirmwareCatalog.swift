import Firmware
import FoundationEssentials
import Wearables

/// The firmware packages in `dfu.dir`, as `bridge/request/firmware/list` shows them: each package's file, its
/// SHA-256 (what `request/dfu` asks for), its size and, per image, the versions its init packet states. A file that
/// is not a usable package is listed with the reason, so a user sees why it is not offered.
///
/// It reads each package in full to hash and parse it (at most `dfu.max_mb` each), only when asked, with the
/// checks of `request/dfu` (`DFUPackageFile.contents`): a FIFO or device named `*.zip` is listed as not a regular
/// file, never opened for reading. Requests use `listOffLoop`, which reads on a thread of its own with a time limit.
public enum FirmwareCatalog {
    public static func list(_ section: Configuration.DFUSection) -> [DeviceValue] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: section.directory)) ?? []
        return names.filter { $0.lowercased().hasSuffix(".zip") }.sorted().map { entry(name: $0, section: section) }
    }

    /// `list` off the data path, for `bridge/request/firmware/list`: `TIMEOUT` when the directory's file system
    /// does not answer within `FileAccessOffLoop.limit`, `BUSY` while earlier reads are still blocked.
    public static func listOffLoop(_ section: Configuration.DFUSection) async throws(CommandError) -> [DeviceValue] {
        switch await FileAccessOffLoop.run({ list(section) }) {
        case .success(let entries): return entries
        case .failure(.timedOut(let limit)): throw CommandError(.timeout, "reading the DFU directory took longer than \(limit)")
        case .failure(.busy): throw CommandError(.busy, "earlier reads of the DFU directory are still blocked")
        }
    }

    /// Every usable package with an application image, as offers, read off the data path; nil when the
    /// directory did not answer in time (the caller keeps what it had).
    public static func offersOffLoop(_ section: Configuration.DFUSection) async -> [FirmwareOffer]? {
        try? await FileAccessOffLoop.run({ offers(section) }).get()
    }

    static func entry(name: String, section: Configuration.DFUSection) -> DeviceValue {
        var object: [String: DeviceValue] = ["file": .text(name)]
        let bytes: [UInt8]
        do {
            bytes = try DFUPackageFile.contents(name: name, directory: section.directory, maximumSize: section.maxBytes)
        } catch {
            if case .tooLarge(let size, _) = error {
                object["bytes"] = .integer(Int64(size))
                object["error"] = .text("larger than dfu.max_mb (\(section.maxMegabytes) MiB)")
            } else {
                object["bytes"] = .integer(0)
                object["error"] = .text(error.message)
            }
            return .object(object)
        }
        object["bytes"] = .integer(Int64(bytes.count))
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

/// A package the gateway offers a device: its application version, newer than what the device runs.
public struct FirmwareOffer: Sendable, Equatable {
    public var file: String
    public var sha256: String
    public var version: String
    /// The model the file is named for: the part of its name before the first `-`, letters and digits only, lower
    /// case (`carexc-2.2.0.zip` is for a "Care-Xc").
    public var model: String

    public init(file: String, sha256: String, version: String, model: String) {
        self.file = file
        self.sha256 = sha256
        self.version = version
        self.model = model
    }

    /// Which package to offer a device of `model` running `installed`: the newest named for its model and newer
    /// than what it runs. Packages say nothing reliable of the product they are for (their `hw_version` is the
    /// chip family), so the file name says it, as docs/home-assistant.md tells users to name them.
    public static func best(for model: String?, installed: String?, among offers: [FirmwareOffer]) -> FirmwareOffer? {
        guard let model, let installed else { return nil }
        let key = FirmwareCatalog.modelKey(model)
        return offers.filter { $0.model == key && FirmwareCatalog.isNewer($0.version, than: installed) }
            .max { FirmwareCatalog.isNewer($1.version, than: $0.version) }
    }
}

extension FirmwareCatalog {
    /// Every usable package with an application image, as offers.
    public static func offers(_ section: Configuration.DFUSection) -> [FirmwareOffer] {
        list(section).compactMap { entry in
            guard let file = entry["file"]?.text, let sha256 = entry["sha256"]?.text, let version = entry["firmware"]?.text,
                  entry["error"] == nil else { return nil }
            return FirmwareOffer(file: file, sha256: sha256, version: version,
                                 model: modelKey(String(file.split(separator: "-").first ?? "")))
        }
    }

    static func modelKey(_ text: String) -> String {
        String(text.lowercased().filter { $0.isLetter || $0.isNumber })
    }

    /// Dotted versions compared number by number (`2.10.0` is newer than `2.9.1`); text that is not one compares as text.
    static func isNewer(_ candidate: String, than installed: String) -> Bool {
        let a = candidate.split(separator: ".").map { Int($0) }, b = installed.split(separator: ".").map { Int($0) }
        guard !a.contains(nil), !b.contains(nil) else { return candidate > installed }
        let left = a.compactMap { $0 }, right = b.compactMap { $0 }
        for index in 0..<max(left.count, right.count) {
            let x = index < left.count ? left[index] : 0, y = index < right.count ? right[index] : 0
            if x != y { return x > y }
        }
        return false
    }
}
