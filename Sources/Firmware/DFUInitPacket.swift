import SystemCrypto
import FoundationEssentials
import Wearables

/// The init packet (`.dat`) of Nordic Secure DFU: a protobuf `Packet` of the nRF5 SDK's `dfu-cc.proto`, which
/// tells the bootloader what firmware follows (type, sizes, versions, hash) before a byte of it is sent.
///
/// The protobuf is read and written by swift-protobuf's code generated from the schema
/// (`Protobuf/dfu-init.proto`, `DFUInitPacket+Protobuf.swift`); this type is the gateway's view of it, with the
/// schema's enums as Swift enums and the checks a bootloader makes before it takes an image.
///
/// Byte order of the hash: nrfutil stores the image's SHA-256 **reversed** ("little-endian") relative to the
/// usual digest (`sha256sum`). pc-nrfutil's `Package.calculate_sha256_hash` returns `sha256[31::-1]` with the
/// comment "return hash in little endian"; pc-nrfutil issue #38 shows `nrfutil pkg display` printing
/// `5ac8733e…0cf8` for an image whose `sha256sum` is `f80c246f…c85a`, and PR #61 kept that order "because that
/// is the order the data is being stored and sent". The SDK bootloader (`nrf_dfu_validation.c`, `fw_hash_ok`)
/// swaps the stored hash back to big-endian before comparing. The ECDSA signature is stored the same way: r
/// and s each reversed (`Signing.sign`: `signature[31::-1] + signature[63:31:-1]`).
///
/// This type does not check signatures: the device holds the public key, the gateway does not.
public struct DFUInitPacket: Sendable, Equatable {
    /// `FwType` of `dfu-cc.proto`; `externalApplication` came with SDK 15.3.
    public enum FirmwareType: UInt32, Sendable, CaseIterable {
        case application = 0
        case softDevice = 1
        case bootloader = 2
        case softDeviceBootloader = 3
        case externalApplication = 4
    }

    /// `HashType` of `dfu-cc.proto`. nrfutil only ever writes `sha256`; the others exist in the schema.
    public enum HashType: UInt32, Sendable, CaseIterable {
        case noHash = 0
        case crc = 1
        case sha128 = 2
        case sha256 = 3
        case sha512 = 4
    }

    /// `SignatureType` of `dfu-cc.proto`.
    public enum SignatureType: UInt32, Sendable, CaseIterable {
        case ecdsaP256SHA256 = 0
        case ed25519 = 1
    }

    /// A `SignedCommand`'s signature, bytes as stored (for ECDSA: r and s each little-endian).
    public struct Signature: Sendable, Equatable {
        public var type: SignatureType
        public var bytes: [UInt8]

        public init(type: SignatureType, bytes: [UInt8]) {
            self.type = type
            self.bytes = bytes
        }
    }

    public var firmwareType: FirmwareType
    public var firmwareVersion: UInt32
    public var hardwareVersion: UInt32
    /// SoftDevice firmware ids the image runs on; 0xFFFE means "any" (nrfutil's default).
    public var softDeviceRequired: [UInt32]
    public var softDeviceSize: UInt32
    public var bootloaderSize: UInt32
    public var applicationSize: UInt32
    public var hashType: HashType
    /// As stored: for SHA-256 the digest reversed, for CRC the CRC-32 little-endian.
    public var hash: [UInt8]
    public var isDebug: Bool
    /// Present when the packet is a `SignedCommand`.
    public var signature: Signature?

    public var isSigned: Bool { signature != nil }

    public init(
        firmwareType: FirmwareType, firmwareVersion: UInt32, hardwareVersion: UInt32,
        softDeviceRequired: [UInt32] = [0xFFFE], softDeviceSize: UInt32 = 0, bootloaderSize: UInt32 = 0,
        applicationSize: UInt32 = 0, hashType: HashType, hash: [UInt8], isDebug: Bool = false,
        signature: Signature? = nil
    ) {
        self.firmwareType = firmwareType
        self.firmwareVersion = firmwareVersion
        self.hardwareVersion = hardwareVersion
        self.softDeviceRequired = softDeviceRequired
        self.softDeviceSize = softDeviceSize
        self.bootloaderSize = bootloaderSize
        self.applicationSize = applicationSize
        self.hashType = hashType
        self.hash = hash
        self.isDebug = isDebug
        self.signature = signature
    }

    /// The packet nrfutil would write for `image`: sizes from its length, the reversed SHA-256, unsigned.
    /// For a SoftDevice+bootloader image the split must be given; the rest of the image is the bootloader.
    public init(
        describing image: [UInt8], as firmwareType: FirmwareType, firmwareVersion: UInt32,
        hardwareVersion: UInt32, softDeviceRequired: [UInt32] = [0xFFFE], softDeviceSizeOfCombined: Int = 0,
        isDebug: Bool = false
    ) {
        let size = UInt32(clamping: image.count)
        var softDeviceSize: UInt32 = 0
        var bootloaderSize: UInt32 = 0
        var applicationSize: UInt32 = 0
        switch firmwareType {
        case .application, .externalApplication: applicationSize = size
        case .softDevice: softDeviceSize = size
        case .bootloader: bootloaderSize = size
        case .softDeviceBootloader:
            softDeviceSize = UInt32(clamping: softDeviceSizeOfCombined)
            bootloaderSize = size > softDeviceSize ? size - softDeviceSize : 0
        }
        self.init(
            firmwareType: firmwareType, firmwareVersion: firmwareVersion, hardwareVersion: hardwareVersion,
            softDeviceRequired: softDeviceRequired, softDeviceSize: softDeviceSize, bootloaderSize: bootloaderSize,
            applicationSize: applicationSize, hashType: .sha256, hash: Self.storedSHA256(of: image), isDebug: isDebug)
    }

    /// SHA-256 in the byte order nrfutil stores it: the digest reversed.
    public static func storedSHA256(of image: [UInt8]) -> [UInt8] {
        Digest.sha256(image).reversed()
    }

    // MARK: Checking an image

    /// How many bytes of image the packet announces: `app_size`, or `sd_size + bl_size` as the type says.
    public var expectedImageSize: Int {
        switch firmwareType {
        case .application, .externalApplication: Int(applicationSize)
        case .softDevice: Int(softDeviceSize)
        case .bootloader: Int(bootloaderSize)
        case .softDeviceBootloader: Int(softDeviceSize) + Int(bootloaderSize)
        }
    }

    /// Whether `image` is the firmware this packet describes: its size and its hash (SHA-256 reversed as
    /// nrfutil stores it; CRC as zlib CRC-32 little-endian; `noHash` accepts any image of the right size).
    ///
    /// Only SHA-256 is documented by use: nrfutil writes nothing else, and the SDK bootloader's `fw_hash_ok`
    /// checks SHA-256 whatever `hash_type` says. The CRC and SHA-512 readings are modeled, so a packet with
    /// those types that passes here may still be refused by a real device.
    public func imageDigestMatches(_ image: [UInt8]) -> Bool {
        mismatch(with: image) == nil
    }

    /// Why `image` is not the firmware this packet describes, as a clause for an error message; nil if it is.
    func mismatch(with image: [UInt8]) -> String? {
        guard image.count == expectedImageSize else {
            return "the init packet announces \(expectedImageSize) bytes, the image has \(image.count)"
        }
        let computed: [UInt8]
        switch hashType {
        case .noHash:
            return nil
        case .crc:
            let crc = DFUChecksum.crc32(image)
            computed = (0..<4).map { UInt8(truncatingIfNeeded: crc >> (8 * $0)) }
        case .sha256:
            computed = Self.storedSHA256(of: image)
        case .sha512:
            // Modeled on SHA-256: nrfutil never writes SHA-512, so its byte order is an assumption.
            computed = Digest.sha512(image).reversed()
        case .sha128:
            return "the init packet's hash type SHA128 names no algorithm this gateway can check"
        }
        guard computed == hash else {
            return "the image's \(hashType.name) is \(DFUHex.string(computed)) (as stored), the init packet says \(DFUHex.string(hash))"
        }
        return nil
    }

}

extension DFUInitPacket.FirmwareType {
    /// The schema's own name, for messages.
    public var name: String {
        switch self {
        case .application: "APPLICATION"
        case .softDevice: "SOFTDEVICE"
        case .bootloader: "BOOTLOADER"
        case .softDeviceBootloader: "SOFTDEVICE_BOOTLOADER"
        case .externalApplication: "EXTERNAL_APPLICATION"
        }
    }
}

extension DFUInitPacket.HashType {
    /// The schema's own name, for messages.
    public var name: String {
        switch self {
        case .noHash: "NO_HASH"
        case .crc: "CRC"
        case .sha128: "SHA128"
        case .sha256: "SHA256"
        case .sha512: "SHA512"
        }
    }
}

/// Lowercase hex, for messages that name digests.
enum DFUHex {
    static func string(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
    }
}
