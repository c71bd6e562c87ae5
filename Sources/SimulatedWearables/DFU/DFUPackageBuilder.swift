import Crypto
import Firmware
import Foundation
import Wearables
import ZIPFoundation

/// Makes Nordic DFU packages in memory, as `nrfutil pkg generate` would, for the simulator and for tests —
/// including broken ones: every layer (init packet, manifest, zip) can be replaced by the caller.
///
/// It is not a packaging tool for real firmware: it takes `.bin` images, never `.hex`, and signs only with a
/// key it is given (or a throwaway one), so no device outside the simulator would accept what it signs.
public enum DFUPackageBuilder {
    /// One image and its init packet as they go into the zip.
    public struct Image: Sendable {
        public var kind: DFUImageKind
        public var firmware: [UInt8]
        /// The `.dat` bytes, whatever they are: a Secure DFU packet, a legacy one, or garbage for a test.
        public var initPacket: [UInt8]
        public var binFile: String
        public var datFile: String
        /// Written as `info_read_only_metadata` when either is set.
        public var softDeviceSize: Int?
        public var bootloaderSize: Int?

        public init(
            kind: DFUImageKind, firmware: [UInt8], initPacket: [UInt8], binFile: String? = nil,
            datFile: String? = nil, softDeviceSize: Int? = nil, bootloaderSize: Int? = nil
        ) {
            let stem = kind == .softDeviceBootloader ? "sd_bl" : kind.manifestKey
            self.kind = kind
            self.firmware = firmware
            self.initPacket = initPacket
            self.binFile = binFile ?? "\(stem).bin"
            self.datFile = datFile ?? "\(stem).dat"
            self.softDeviceSize = softDeviceSize
            self.bootloaderSize = bootloaderSize
        }

        /// An image with the init packet nrfutil would make for it. A SoftDevice+bootloader image needs the
        /// size of its SoftDevice part, which also goes into the manifest's metadata as nrfutil writes it.
        public static func described(
            _ kind: DFUImageKind, firmware: [UInt8], firmwareVersion: UInt32, hardwareVersion: UInt32 = 52,
            softDeviceSizeOfCombined: Int = 0, signingKey: P256.Signing.PrivateKey? = nil
        ) -> Image {
            let type: DFUInitPacket.FirmwareType =
                switch kind {
                case .application: .application
                case .softDevice: .softDevice
                case .bootloader: .bootloader
                case .softDeviceBootloader: .softDeviceBootloader
                // Modeled: the bootloaders that take the combined keys define their init packets themselves.
                case .softDeviceApplication, .bootloaderApplication, .softDeviceBootloaderApplication: .application
                }
            var packet = DFUInitPacket(
                describing: firmware, as: type, firmwareVersion: firmwareVersion, hardwareVersion: hardwareVersion,
                softDeviceSizeOfCombined: softDeviceSizeOfCombined)
            if let signingKey { packet = packet.signed(with: signingKey) }
            let combined = kind == .softDeviceBootloader
            return Image(
                kind: kind, firmware: firmware, initPacket: packet.encoded(),
                softDeviceSize: combined ? softDeviceSizeOfCombined : nil,
                bootloaderSize: combined ? max(0, firmware.count - softDeviceSizeOfCombined) : nil)
        }
    }

    /// A correct application package. `signed` signs with a throwaway key: the packet has the signed shape,
    /// which is what the simulator and the gateway look at.
    public static func application(
        firmware: [UInt8], firmwareVersion: UInt32, hardwareVersion: UInt32 = 52, signed: Bool = false
    ) -> [UInt8] {
        package([
            .described(
                .application, firmware: firmware, firmwareVersion: firmwareVersion, hardwareVersion: hardwareVersion,
                signingKey: signed ? P256.Signing.PrivateKey() : nil)
        ])
    }

    /// A Legacy DFU application package as nrfutil 0.5 (`nrfutil dfu genpkg --application …`) wrote it: the image,
    /// its Legacy init packet as the `.dat` (`LegacyDFUInitPacket`: any device and SoftDevice, the image's CRC-16),
    /// and a manifest with `"dfu_version": 0.5` and the init packet's fields as `init_packet_data`.
    /// 0xFFFF_FFFF, nrfutil's default application version, means "no version".
    public static func legacyApplication(
        firmware: [UInt8], applicationVersion: UInt32 = LegacyDFUInitPacket.anyApplicationVersion
    ) -> [UInt8] {
        let initPacket = LegacyDFUInitPacket(for: firmware, applicationVersion: applicationVersion)
        let image = Image(kind: .application, firmware: firmware, initPacket: initPacket.encoded())
        let manifest: [String: Any] = [
            "application": [
                "bin_file": image.binFile,
                "dat_file": image.datFile,
                "init_packet_data": [
                    "application_version": Int(initPacket.applicationVersion),
                    "device_revision": Int(initPacket.deviceRevision),
                    "device_type": Int(initPacket.deviceType),
                    "firmware_crc16": Int(initPacket.imageCRC16),
                    "softdevice_req": initPacket.softDevices.map(Int.init),
                ],
            ],
            "dfu_version": 0.5,
        ]
        return zip([("manifest.json", json(["manifest": manifest])), (image.binFile, image.firmware),
                    (image.datFile, image.initPacket)])
    }

    /// `manifest.json` naming the images, plus each image's `.bin` and `.dat`.
    public static func package(_ images: [Image], compressed: Bool = false) -> [UInt8] {
        var files: [(name: String, contents: [UInt8])] = [("manifest.json", manifest(for: images))]
        for image in images {
            files.append((image.binFile, image.firmware))
            files.append((image.datFile, image.initPacket))
        }
        return zip(files, compressed: compressed)
    }

    /// The manifest nrfutil writes for these images, keys sorted.
    public static func manifest(for images: [Image]) -> [UInt8] {
        var entries: [String: Any] = [:]
        for image in images {
            var entry: [String: Any] = ["bin_file": image.binFile, "dat_file": image.datFile]
            if image.softDeviceSize != nil || image.bootloaderSize != nil {
                var metadata: [String: Any] = [:]
                metadata["sd_size"] = image.softDeviceSize
                metadata["bl_size"] = image.bootloaderSize
                entry["info_read_only_metadata"] = metadata
            }
            entries[image.kind.manifestKey] = entry
        }
        return json(["manifest": entries])
    }

    /// Any files in a zip, in the given order: the lowest level, for packages broken on purpose.
    public static func zip(_ files: [(name: String, contents: [UInt8])], compressed: Bool = false) -> [UInt8] {
        // A fixed date keeps the same input producing the same bytes.
        let modified = Date(timeIntervalSince1970: 1_700_000_000)
        do {
            let archive = try Archive(accessMode: .create)
            for file in files {
                let data = Data(file.contents)
                try archive.addEntry(
                    with: file.name, type: .file, uncompressedSize: Int64(data.count), modificationDate: modified,
                    compressionMethod: compressed ? .deflate : .none
                ) { position, size in
                    data.subdata(in: Int(position)..<Int(position) + size)
                }
            }
            guard let data = archive.data else { preconditionFailure("an in-memory archive always has data") }
            return Array(data)
        } catch {
            // Writing to memory fails only on a ZIPFoundation bug; the caller (a test or the simulator) cannot
            // do anything sensible with it.
            preconditionFailure("building a DFU package in memory failed: \(error)")
        }
    }

    private static func json(_ object: [String: Any]) -> [UInt8] {
        do {
            return Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted]))
        } catch {
            preconditionFailure("a manifest of strings and numbers is always JSON: \(error)")
        }
    }
}
