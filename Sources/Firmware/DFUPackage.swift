import Wearables

/// Why a firmware package was refused before anything was sent to a device. The message is a sentence for the
/// person who asked for the update. Like the other codec errors it carries no MQTT error code: the gateway
/// chooses one. None of these is worth retrying with the same file.
public enum DFUPackageError: Error, Equatable, Sendable, CustomStringConvertible {
    // The init packet (DFUInitPacket)
    /// The `.dat` is not a Secure DFU init packet; the reason names the field or byte.
    case malformedInitPacket(String)

    // The zip (DFUPackage)
    case notAZip
    /// A zip the package reader does not take (ZIP64, encryption, a method other than deflate, two entries of one
    /// name, offsets past the end).
    case unsupportedZip(String)
    /// The package file or data is larger than the configured limit.
    case tooLarge(bytes: Int, limit: Int)
    /// The zip's entries would expand to more than the limit (a zip bomb, or just too much firmware).
    case expandsTooLarge(bytes: UInt64, limit: Int)
    /// An entry does not inflate, or inflates to other bytes than its CRC says.
    case corruptEntry(name: String, reason: String)
    case missingManifest
    case invalidManifest(String)
    /// A file `manifest.json` names is not in the zip.
    case missingFile(String)
    /// An image or init packet the manifest names has no bytes.
    case emptyFile(String)
    /// The init packet parses but describes other firmware than the image next to it.
    case initPacketMismatch(file: String, reason: String)

    // The file under dfu.dir (DFUPackageFile)
    /// Absolute names, `..` and empty names are refused before the file system is asked.
    case invalidFileName(name: String, reason: String)
    case directoryNotFound(String)
    /// Nothing the gateway may read is at that name: it does not exist, or it resolves (through symlinks) to
    /// somewhere outside the DFU directory. One error for both, so a request cannot probe the rest of the disk.
    case fileNotFound(String)
    /// The name is inside the DFU directory but is not a regular file (a directory, FIFO, socket or device),
    /// or opening or reading it failed.
    case unreadable(name: String, reason: String)
    /// The `sha256` of the request is not 64 hex digits.
    case invalidChecksum(String)
    /// The file's digest is not the requested one. The real digest is not carried: an answer naming it would
    /// hand out a fingerprint of any file in the directory to whoever may send `request/dfu`.
    case checksumMismatch(expected: String)

    public var message: String {
        switch self {
        case .malformedInitPacket(let reason):
            "The init packet is malformed: \(reason)."
        case .notAZip:
            "The firmware package is not a zip file."
        case .unsupportedZip(let reason):
            "The firmware package is a zip this gateway does not read: \(reason); package it again with nrfutil."
        case .tooLarge(let bytes, let limit):
            "The firmware package is \(bytes) bytes, more than the limit of \(limit) bytes."
        case .expandsTooLarge(let bytes, let limit):
            "The firmware package unpacks to at least \(bytes) bytes, more than the limit of \(limit) bytes."
        case .corruptEntry(let name, let reason):
            "The file \(name) in the firmware package is corrupt: \(reason)."
        case .missingManifest:
            "The firmware package has no manifest.json; it is not a Nordic DFU package."
        case .invalidManifest(let reason):
            "The manifest.json of the firmware package is invalid: \(reason)."
        case .missingFile(let name):
            "The manifest names \(name), which the firmware package does not contain."
        case .emptyFile(let name):
            "The file \(name) in the firmware package is empty."
        case .initPacketMismatch(let file, let reason):
            "The init packet \(file) does not match its image: \(reason)."
        case .invalidFileName(let name, let reason):
            "The firmware file name \"\(name)\" is refused: \(reason)."
        case .directoryNotFound(let directory):
            "The DFU directory \(directory) does not exist."
        case .fileNotFound(let name):
            "There is no firmware file \"\(name)\" in the DFU directory."
        case .unreadable(let name, let reason):
            "The firmware file \"\(name)\" cannot be read: \(reason)."
        case .invalidChecksum(let given):
            "The sha256 \"\(given)\" is not 64 hexadecimal digits."
        case .checksumMismatch(let expected):
            "The firmware file's SHA-256 does not match the expected \(expected)."
        }
    }

    public var description: String { message }
}

/// The images a Nordic DFU package can hold, in the order they must be sent: a new SoftDevice or bootloader
/// first, so the application that follows finds what it was built for.
///
/// The order is Android-DFU-Library's: `ArchiveInputStream` reads the system part (`softdevice_bootloader`,
/// `softdevice`, `bootloader`) and the application part, and `BaseDfuImpl.initialize` sends the system part first
/// and the application in a second connection ("splitting into 2 parts"). The three keys that combine an
/// application with a SoftDevice and/or bootloader are, per `Manifest.getApplicationInfo`, the application part
/// (sent last, as one image); only Secure DFU takes them (`Manifest.isSecureDfuRequired`).
public enum DFUImageKind: String, Sendable, CaseIterable, Comparable {
    case softDeviceBootloader = "softdevice_bootloader"
    case softDevice = "softdevice"
    case bootloader = "bootloader"
    case application = "application"
    case softDeviceApplication = "softdevice_application"
    case bootloaderApplication = "bootloader_application"
    case softDeviceBootloaderApplication = "softdevice_bootloader_application"

    /// The manifest key.
    public var manifestKey: String { rawValue }

    public static func < (lhs: DFUImageKind, rhs: DFUImageKind) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// Whether this is the package's application part: `application` or one of the combined keys. A manifest
    /// holds at most one (Android-DFU-Library's `Manifest.getApplicationInfo` would send only the first).
    public var isApplicationPart: Bool {
        switch self {
        case .application, .softDeviceApplication, .bootloaderApplication, .softDeviceBootloaderApplication: true
        case .softDeviceBootloader, .softDevice, .bootloader: false
        }
    }

    /// An application sent together with a SoftDevice and/or bootloader in one image. The split lives in the init
    /// packet, in a way each bootloader that offers these keys defines for itself ("some implementations of Secure
    /// DFU", `Manifest.java`); Legacy DFU cannot announce it.
    public var isCombinedWithApplication: Bool { isApplicationPart && self != .application }

    /// Which init packet firmware types may describe this kind of image; nil for the combined kinds, whose init
    /// packet the gateway leaves to the bootloader that defined them.
    var acceptedFirmwareTypes: [DFUInitPacket.FirmwareType]? {
        switch self {
        case .softDeviceBootloader: [.softDeviceBootloader]
        case .softDevice: [.softDevice]
        case .bootloader: [.bootloader]
        case .application: [.application, .externalApplication]
        case .softDeviceApplication, .bootloaderApplication, .softDeviceBootloaderApplication: nil
        }
    }
}

/// One image of a package with its init packet, ready to send.
public struct DFUImage: Sendable, Equatable {
    public var kind: DFUImageKind
    public var binFile: String
    public var datFile: String
    /// The `.dat` exactly as in the package: Secure DFU sends it as the command object, Legacy DFU as its init.
    public var initPacket: [UInt8]
    public var firmware: [UInt8]
    /// The `.dat` read as a Secure DFU init packet; nil for Legacy DFU packages, whose `.dat` is another format.
    public var parsedInit: DFUInitPacket?
    /// Why the `.dat` did not parse as Secure DFU, for a driver that needs it to.
    public var initPacketParseError: DFUPackageError?
    /// From the manifest (SoftDevice+bootloader images): how the image splits, which Legacy DFU must announce in
    /// its Start. nrfutil 0.5 (and adafruit-nrfutil) writes `sd_size` / `bl_size` in the entry itself, later
    /// versions in its `info_read_only_metadata`; both are read, as iOS-DFU-Library's `SoftDeviceBootloaderInfo`
    /// does.
    public var softDeviceSize: Int?
    public var bootloaderSize: Int?

    public init(
        kind: DFUImageKind, binFile: String, datFile: String, initPacket: [UInt8], firmware: [UInt8],
        parsedInit: DFUInitPacket?, initPacketParseError: DFUPackageError? = nil, softDeviceSize: Int? = nil,
        bootloaderSize: Int? = nil
    ) {
        self.kind = kind
        self.binFile = binFile
        self.datFile = datFile
        self.initPacket = initPacket
        self.firmware = firmware
        self.parsedInit = parsedInit
        self.initPacketParseError = initPacketParseError
        self.softDeviceSize = softDeviceSize
        self.bootloaderSize = bootloaderSize
    }
}

/// A Nordic DFU package (the zip `nrfutil pkg generate` writes: `manifest.json`, and a `.bin` image with its
/// `.dat` init packet per entry), read from memory and checked as far as it can be without a device.
///
/// Reading it does not touch the file system: the gateway confines and reads the file itself
/// (`DFUPackageFile`). Signatures are not checked, the device does that.
public struct DFUPackage: Sendable, Equatable {
    /// In the order they must be sent (`DFUImageKind`).
    public var images: [DFUImage]

    /// Refuses data over `maximumSize` before unzipping, and entries that together would expand beyond it
    /// before inflating any; an entry that inflates to more than its header declared is refused while
    /// inflating, so no more than `maximumSize` bytes are ever held.
    public init(data: [UInt8], maximumSize: Int) throws(DFUPackageError) {
        guard data.count <= maximumSize else { throw .tooLarge(bytes: data.count, limit: maximumSize) }
        let archive = try ZIPArchive(bytes: data, expandingAtMost: maximumSize)
        let reader = EntryReader(archive: archive)

        let manifest = try DFUManifest(json: reader.contents(of: "manifest.json", orThrow: .missingManifest))
        images = try manifest.entries.map { entry throws(DFUPackageError) in
            let firmware = try reader.contents(of: entry.binFile, orThrow: .missingFile(entry.binFile))
            let initPacket = try reader.contents(of: entry.datFile, orThrow: .missingFile(entry.datFile))
            guard !firmware.isEmpty else { throw .emptyFile(entry.binFile) }
            guard !initPacket.isEmpty else { throw .emptyFile(entry.datFile) }
            if let softDevice = entry.softDeviceSize, let bootloader = entry.bootloaderSize,
                softDevice + bootloader != firmware.count
            {
                throw .invalidManifest(
                    "\(entry.kind.manifestKey) says sd_size \(softDevice) + bl_size \(bootloader) bytes, but "
                        + "\(entry.binFile) has \(firmware.count)")
            }

            var parsedInit: DFUInitPacket?
            var parseError: DFUPackageError?
            do throws(DFUPackageError) {
                parsedInit = try DFUInitPacket(decoding: initPacket)
            } catch {
                parseError = error
            }
            if let parsedInit {
                try Self.check(parsedInit, describes: firmware, of: entry)
            }
            return DFUImage(
                kind: entry.kind, binFile: entry.binFile, datFile: entry.datFile, initPacket: initPacket,
                firmware: firmware, parsedInit: parsedInit, initPacketParseError: parseError,
                softDeviceSize: entry.softDeviceSize, bootloaderSize: entry.bootloaderSize)
        }
    }

    public init(images: [DFUImage]) {
        self.images = images.sorted { $0.kind < $1.kind }
    }

    private static func check(
        _ initPacket: DFUInitPacket, describes firmware: [UInt8], of entry: DFUManifest.Entry
    ) throws(DFUPackageError) {
        guard let acceptedTypes = entry.kind.acceptedFirmwareTypes else { return }
        guard acceptedTypes.contains(initPacket.firmwareType) else {
            throw .initPacketMismatch(
                file: entry.datFile,
                reason: "it describes a \(initPacket.firmwareType.name) image, the manifest lists \(entry.binFile) as "
                    + entry.kind.manifestKey)
        }
        if let reason = initPacket.mismatch(with: firmware) {
            throw .initPacketMismatch(file: entry.datFile, reason: reason)
        }
        if let softDevice = entry.softDeviceSize, softDevice != Int(initPacket.softDeviceSize) {
            throw .initPacketMismatch(
                file: entry.datFile,
                reason: "its sd_size is \(initPacket.softDeviceSize), the manifest's metadata says \(softDevice)")
        }
    }
}

/// Reads named entries that must be files.
private struct EntryReader {
    let archive: ZIPArchive

    func contents(of name: String, orThrow missing: DFUPackageError) throws(DFUPackageError) -> [UInt8] {
        guard let entry = archive.entries.first(where: { $0.name == name }) else { throw missing }
        switch entry.kind {
        case .file: return try archive.contents(of: entry)
        case .directory: throw .corruptEntry(name: name, reason: "it is a directory, not a file")
        case .symbolicLink: throw .corruptEntry(name: name, reason: "it is a symbolic link, not a file")
        }
    }
}

/// `manifest.json`: `{"manifest": {"application": {"bin_file": …, "dat_file": …}, …}}`. Keys it does not know
/// (`dfu_version`, legacy `init_packet_data`) are ignored.
struct DFUManifest {
    struct Entry {
        var kind: DFUImageKind
        var binFile: String
        var datFile: String
        var softDeviceSize: Int?
        var bootloaderSize: Int?
    }

    /// In sending order.
    var entries: [Entry]

    init(json bytes: [UInt8]) throws(DFUPackageError) {
        let top: DeviceValue
        do throws(JSONParsingError) {
            top = try JSONParser.parse(bytes, limits: JSONLimits(maximumBytes: bytes.count, maximumDepth: 32))
        } catch {
            guard case .syntax(let problem, let offset) = error else { throw .invalidManifest("\(error)") }
            throw .invalidManifest("it is not JSON: \(problem) at byte \(offset)")
        }
        guard let manifest = top["manifest"]?.object else {
            throw .invalidManifest("it has no \"manifest\" object at the top")
        }
        var entries: [Entry] = []
        for kind in DFUImageKind.allCases {
            guard let value = manifest[kind.manifestKey] else { continue }
            guard let image = value.object else {
                throw .invalidManifest("\"\(kind.manifestKey)\" is not an object")
            }
            let binFile = try Self.fileName(image, "bin_file", of: kind)
            let datFile = try Self.fileName(image, "dat_file", of: kind)
            var entry = Entry(kind: kind, binFile: binFile, datFile: datFile)
            // nrfutil 0.5 writes the sizes in the entry, later versions in info_read_only_metadata.
            entry.softDeviceSize = try Self.size(image, "sd_size", at: kind.manifestKey)
            entry.bootloaderSize = try Self.size(image, "bl_size", at: kind.manifestKey)
            if let metadata = image["info_read_only_metadata"] {
                guard let metadata = metadata.object else {
                    throw .invalidManifest("\"\(kind.manifestKey).info_read_only_metadata\" is not an object")
                }
                let path = kind.manifestKey + ".info_read_only_metadata"
                entry.softDeviceSize = try Self.merge(entry.softDeviceSize, Self.size(metadata, "sd_size", at: path),
                                                      "sd_size", of: kind)
                entry.bootloaderSize = try Self.merge(entry.bootloaderSize, Self.size(metadata, "bl_size", at: path),
                                                      "bl_size", of: kind)
            }
            entries.append(entry)
        }
        guard !entries.isEmpty else {
            let kinds = DFUImageKind.allCases.map(\.manifestKey).joined(separator: ", ")
            throw .invalidManifest("it names no image (\(kinds))")
        }
        let applicationParts = entries.filter(\.kind.isApplicationPart).map(\.kind.manifestKey)
        guard applicationParts.count <= 1 else {
            throw .invalidManifest("it names \(applicationParts.joined(separator: " and ")); a package carries one "
                                   + "application part, the others would never be sent")
        }
        self.entries = entries
    }

    private static func fileName(_ image: [String: DeviceValue], _ key: String, of kind: DFUImageKind) throws(DFUPackageError) -> String {
        guard let name = image[key]?.text, !name.isEmpty else {
            throw .invalidManifest("\"\(kind.manifestKey)\" has no \"\(key)\" name")
        }
        return name
    }

    private static func size(_ object: [String: DeviceValue], _ key: String, at path: String) throws(DFUPackageError) -> Int? {
        guard let value = object[key] else { return nil }
        guard let size = value.integer.flatMap({ Int(exactly: $0) }), size >= 0 else {
            throw .invalidManifest("\"\(path).\(key)\" is not a size in bytes")
        }
        return size
    }

    /// A size given both in the entry and in its metadata must be the same.
    private static func merge(_ direct: Int?, _ metadata: Int?, _ key: String, of kind: DFUImageKind) throws(DFUPackageError) -> Int? {
        if let direct, let metadata, direct != metadata {
            throw .invalidManifest("\"\(kind.manifestKey)\" gives \(key) \(direct), its info_read_only_metadata \(metadata)")
        }
        return metadata ?? direct
    }
}
