import Crypto
import Foundation
import Wearables
import ZIPFoundation

/// The init packet (`.dat`) of Nordic Secure DFU: a protobuf `Packet` of the nRF5 SDK's `dfu-cc.proto`, which
/// tells the bootloader what firmware follows (type, sizes, versions, hash) before a byte of it is sent.
///
/// The protobuf is read and written by hand: the message is small, its schema has been stable since SDK 12, and
/// a hand reader lets every malformed input fail with a sentence instead of a generic decode error. Fields this
/// type does not know (newer nrfutil adds `boot_validation = 10`) are skipped by wire type, so newer packets
/// still parse; they are not written back by `encoded()`.
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
        Array(SHA256.hash(data: image)).reversed()
    }

    /// A copy signed as nrfutil signs: ECDSA P-256 over SHA-256 of the encoded `InitCommand`, r and s each
    /// reversed. Lets the simulator and tests make signed packets; nothing here verifies them.
    public func signed(with key: P256.Signing.PrivateKey) -> DFUInitPacket {
        var copy = self
        // Signing a digest with a valid key cannot fail; swift-crypto only declares `throws` for its backends.
        let raw = (try? key.signature(for: encodedInitCommand()).rawRepresentation).map(Array.init) ?? []
        let stored = Array(raw.prefix(32).reversed()) + Array(raw.dropFirst(32).reversed())
        copy.signature = Signature(type: .ecdsaP256SHA256, bytes: stored)
        return copy
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
            let crc = Data(image).crc32(checksum: 0)
            computed = (0..<4).map { UInt8(truncatingIfNeeded: crc >> (8 * $0)) }
        case .sha256:
            computed = Self.storedSHA256(of: image)
        case .sha512:
            // Modeled on SHA-256: nrfutil never writes SHA-512, so its byte order is an assumption.
            computed = Array(SHA512.hash(data: image)).reversed()
        case .sha128:
            return "the init packet's hash type SHA128 names no algorithm this gateway can check"
        }
        guard computed == hash else {
            return "the image's \(hashType.name) is \(DFUHex.string(computed)) (as stored), the init packet says \(DFUHex.string(hash))"
        }
        return nil
    }

    // MARK: Encoding

    /// The packet as nrfutil writes it: every field set, in field-number order, unsigned as `Packet.command`
    /// and signed as `Packet.signed_command`.
    public func encoded() -> [UInt8] {
        var packet = ProtobufWriter()
        if let signature {
            var signedCommand = ProtobufWriter()
            signedCommand.message(1, encodedCommand())
            signedCommand.varint(2, UInt64(signature.type.rawValue))
            signedCommand.bytes(3, signature.bytes)
            packet.message(2, signedCommand.bytes)
        } else {
            packet.message(1, encodedCommand())
        }
        return packet.bytes
    }

    /// `Command { op_code = INIT, init }`.
    public func encodedCommand() -> [UInt8] {
        var command = ProtobufWriter()
        command.varint(1, 1)
        command.message(2, encodedInitCommand())
        return command.bytes
    }

    /// The `InitCommand` alone: what nrfutil signs.
    public func encodedInitCommand() -> [UInt8] {
        var initCommand = ProtobufWriter()
        initCommand.varint(1, UInt64(firmwareVersion))
        initCommand.varint(2, UInt64(hardwareVersion))
        initCommand.packedVarints(3, softDeviceRequired.map(UInt64.init))
        initCommand.varint(4, UInt64(firmwareType.rawValue))
        initCommand.varint(5, UInt64(softDeviceSize))
        initCommand.varint(6, UInt64(bootloaderSize))
        initCommand.varint(7, UInt64(applicationSize))
        var hashMessage = ProtobufWriter()
        hashMessage.varint(1, UInt64(hashType.rawValue))
        hashMessage.bytes(2, hash)
        initCommand.message(8, hashMessage.bytes)
        initCommand.varint(9, isDebug ? 1 : 0)
        return initCommand.bytes
    }

    // MARK: Decoding

    /// Reads a Secure DFU init packet. A truncated varint or length, a known field with the wrong wire type, an
    /// enum value outside the schema, or a packet without an init command is `malformedInitPacket`; fields this
    /// type does not know are skipped. A field given twice keeps the last value and merges messages, as protobuf
    /// does.
    public init(decoding bytes: [UInt8]) throws(DFUPackageError) {
        var packet = ProtobufReader(bytes[...], message: "Packet")
        var command: CommandFields?
        var signedCommand: CommandFields?
        var signature: (type: SignatureType?, bytes: [UInt8]?) = (nil, nil)
        while let field = try packet.nextField() {
            switch field.number {
            case 1:
                var fields = command ?? CommandFields()
                try fields.merge(packet.message(field, name: "command"))
                command = fields
            case 2:
                var reader = ProtobufReader(try packet.message(field, name: "signed_command"), message: "SignedCommand")
                while let inner = try reader.nextField() {
                    switch inner.number {
                    case 1:
                        var fields = signedCommand ?? CommandFields()
                        try fields.merge(reader.message(inner, name: "command"))
                        signedCommand = fields
                    case 2: signature.type = try reader.enumeration(inner, name: "signature_type", as: SignatureType.self)
                    case 3: signature.bytes = Array(try reader.message(inner, name: "signature"))
                    default: try reader.skip(inner)
                    }
                }
            default:
                try packet.skip(field)
            }
        }

        let chosen: CommandFields
        switch (command, signedCommand) {
        case (.some, .some):
            // The SDK bootloader refuses this too (`stored_init_cmd_decode`).
            throw .malformedInitPacket("the init packet holds both an unsigned and a signed command")
        case (.some(let unsigned), nil):
            chosen = unsigned
            self.signature = nil
        case (nil, .some(let signed)):
            guard let type = signature.type else {
                throw .malformedInitPacket("the signed command has no signature_type")
            }
            chosen = signed
            self.signature = Signature(type: type, bytes: signature.bytes ?? [])
        case (nil, nil):
            throw .malformedInitPacket("the init packet holds no command, so no init command")
        }
        guard let initCommand = chosen.initCommand else {
            throw .malformedInitPacket("the command has no init command")
        }
        if let opCode = chosen.opCode, opCode != 1 {
            throw .malformedInitPacket("the command's op_code is \(opCode), not INIT (1)")
        }
        firmwareType = initCommand.firmwareType
        firmwareVersion = initCommand.firmwareVersion
        hardwareVersion = initCommand.hardwareVersion
        softDeviceRequired = initCommand.softDeviceRequired
        softDeviceSize = initCommand.softDeviceSize
        bootloaderSize = initCommand.bootloaderSize
        applicationSize = initCommand.applicationSize
        hashType = initCommand.hashType
        hash = initCommand.hash
        isDebug = initCommand.isDebug
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

/// A `Command` as it is read, before we know whether it is the one the packet uses.
private struct CommandFields {
    var opCode: UInt32?
    var initCommand: InitCommandFields?

    mutating func merge(_ bytes: ArraySlice<UInt8>) throws(DFUPackageError) {
        var reader = ProtobufReader(bytes, message: "Command")
        while let field = try reader.nextField() {
            switch field.number {
            case 1: opCode = try reader.uint32(field, name: "op_code")
            case 2:
                var fields = initCommand ?? InitCommandFields()
                try fields.merge(reader.message(field, name: "init"))
                initCommand = fields
            default: try reader.skip(field)
            }
        }
    }
}

/// An `InitCommand` with the schema's defaults for absent fields.
private struct InitCommandFields {
    var firmwareVersion: UInt32 = 0
    var hardwareVersion: UInt32 = 0
    var softDeviceRequired: [UInt32] = []
    var firmwareType: DFUInitPacket.FirmwareType = .application
    var softDeviceSize: UInt32 = 0
    var bootloaderSize: UInt32 = 0
    var applicationSize: UInt32 = 0
    var hashType: DFUInitPacket.HashType = .noHash
    var hash: [UInt8] = []
    var isDebug = false

    mutating func merge(_ bytes: ArraySlice<UInt8>) throws(DFUPackageError) {
        var reader = ProtobufReader(bytes, message: "InitCommand")
        while let field = try reader.nextField() {
            switch field.number {
            case 1: firmwareVersion = try reader.uint32(field, name: "fw_version")
            case 2: hardwareVersion = try reader.uint32(field, name: "hw_version")
            case 3: softDeviceRequired += try reader.repeatedUInt32(field, name: "sd_req")
            case 4: firmwareType = try reader.enumeration(field, name: "type", as: DFUInitPacket.FirmwareType.self)
            case 5: softDeviceSize = try reader.uint32(field, name: "sd_size")
            case 6: bootloaderSize = try reader.uint32(field, name: "bl_size")
            case 7: applicationSize = try reader.uint32(field, name: "app_size")
            case 8:
                var hashReader = ProtobufReader(try reader.message(field, name: "hash"), message: "Hash")
                while let inner = try hashReader.nextField() {
                    switch inner.number {
                    case 1: hashType = try hashReader.enumeration(inner, name: "hash_type", as: DFUInitPacket.HashType.self)
                    case 2: hash = Array(try hashReader.message(inner, name: "hash"))
                    default: try hashReader.skip(inner)
                    }
                }
            case 9: isDebug = try reader.uint64(field, name: "is_debug") != 0
            default: try reader.skip(field)
            }
        }
    }
}

// MARK: - Protobuf wire format

/// One field's key: its number and how its value is framed.
private struct ProtobufField {
    var number: UInt64
    var wireType: UInt8
    /// Where the key started, for messages.
    var offset: Int
}

/// Reads the protobuf wire format from a slice of the init packet. Offsets in errors are counted from the start
/// of the whole packet (slices keep their parent's indices), so a person can find the byte in a hex dump.
private struct ProtobufReader {
    private let bytes: ArraySlice<UInt8>
    private var index: Int
    /// The message being read, for errors.
    private let message: String

    init(_ bytes: ArraySlice<UInt8>, message: String) {
        self.bytes = bytes
        self.index = bytes.startIndex
        self.message = message
    }

    /// The next field's key, or nil at the end of the message.
    mutating func nextField() throws(DFUPackageError) -> ProtobufField? {
        guard index < bytes.endIndex else { return nil }
        let offset = index
        let key = try varint(what: "a field key")
        let number = key >> 3
        let wireType = UInt8(key & 7)
        guard number != 0 else {
            throw .malformedInitPacket("\(message) has a field numbered 0 at byte \(offset), which protobuf forbids")
        }
        return ProtobufField(number: number, wireType: wireType, offset: offset)
    }

    mutating func uint64(_ field: ProtobufField, name: String) throws(DFUPackageError) -> UInt64 {
        try expect(field, wireType: 0, name: name)
        return try varint(what: "\(message).\(name)")
    }

    mutating func uint32(_ field: ProtobufField, name: String) throws(DFUPackageError) -> UInt32 {
        let value = try uint64(field, name: name)
        guard let narrow = UInt32(exactly: value) else {
            throw .malformedInitPacket("\(message).\(name) at byte \(field.offset) is \(value), more than a uint32 holds")
        }
        return narrow
    }

    mutating func enumeration<Value: RawRepresentable & CaseIterable>(
        _ field: ProtobufField, name: String, as _: Value.Type
    ) throws(DFUPackageError) -> Value where Value.RawValue == UInt32 {
        let raw = try uint32(field, name: name)
        guard let value = Value(rawValue: raw) else {
            let known = Value.allCases.map { String($0.rawValue) }.joined(separator: ", ")
            throw .malformedInitPacket("\(message).\(name) is \(raw), not one of the values dfu-cc.proto defines (\(known))")
        }
        return value
    }

    /// A packed list (wire type 2) or, as protobuf parsers must also accept, one unpacked element (wire type 0).
    mutating func repeatedUInt32(_ field: ProtobufField, name: String) throws(DFUPackageError) -> [UInt32] {
        if field.wireType == 0 { return [try uint32(field, name: name)] }
        var packed = ProtobufReader(try message(field, name: name), message: "\(message).\(name)")
        var values: [UInt32] = []
        while !packed.isAtEnd {
            let offset = packed.index
            let value = try packed.varint(what: "an element")
            guard let narrow = UInt32(exactly: value) else {
                throw .malformedInitPacket("\(message).\(name) has \(value) at byte \(offset), more than a uint32 holds")
            }
            values.append(narrow)
        }
        return values
    }

    /// A length-delimited value: bytes, a string, a packed list or an embedded message.
    mutating func message(_ field: ProtobufField, name: String) throws(DFUPackageError) -> ArraySlice<UInt8> {
        try expect(field, wireType: 2, name: name)
        return try lengthDelimited(what: "\(message).\(name)")
    }

    /// Steps over a field this reader does not know, so newer packets still parse.
    mutating func skip(_ field: ProtobufField) throws(DFUPackageError) {
        let what = "unknown field \(field.number) of \(message)"
        switch field.wireType {
        case 0: _ = try varint(what: what)
        case 1: try advance(8, what: what)
        case 2: _ = try lengthDelimited(what: what)
        case 5: try advance(4, what: what)
        case 3, 4:
            throw .malformedInitPacket("\(what) at byte \(field.offset) is a group (wire type \(field.wireType)), which dfu-cc.proto never uses")
        default:
            throw .malformedInitPacket("\(what) at byte \(field.offset) has wire type \(field.wireType), which protobuf does not define")
        }
    }

    private var isAtEnd: Bool { index >= bytes.endIndex }

    private func expect(_ field: ProtobufField, wireType: UInt8, name: String) throws(DFUPackageError) {
        guard field.wireType == wireType else {
            throw .malformedInitPacket(
                "\(message).\(name) (field \(field.number)) at byte \(field.offset) has wire type \(field.wireType), "
                    + "expected \(wireType) (\(wireType == 0 ? "varint" : "length-delimited"))")
        }
    }

    private mutating func varint(what: String) throws(DFUPackageError) -> UInt64 {
        let start = index
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard index < bytes.endIndex else {
                throw .malformedInitPacket("\(message) ends inside \(what): the varint at byte \(start) is truncated")
            }
            let byte = bytes[index]
            index += 1
            // The tenth byte may only carry the top bit of 64.
            guard shift < 63 || byte <= 1 else {
                throw .malformedInitPacket("\(what) in \(message) at byte \(start) is a varint longer than 64 bits")
            }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    private mutating func lengthDelimited(what: String) throws(DFUPackageError) -> ArraySlice<UInt8> {
        let start = index
        let length = try varint(what: "the length of \(what)")
        let available = bytes.endIndex - index
        guard length <= UInt64(available) else {
            throw .malformedInitPacket(
                "\(what) at byte \(start) claims \(length) bytes, only \(available) remain in \(message)")
        }
        let end = index + Int(length)
        defer { index = end }
        return bytes[index..<end]
    }

    private mutating func advance(_ count: Int, what: String) throws(DFUPackageError) {
        guard bytes.endIndex - index >= count else {
            throw .malformedInitPacket("\(what) at byte \(index) needs \(count) bytes, only \(bytes.endIndex - index) remain")
        }
        index += count
    }
}

/// Writes the protobuf wire format, fields in the order they are added.
private struct ProtobufWriter {
    private(set) var bytes: [UInt8] = []

    mutating func varint(_ field: UInt64, _ value: UInt64) {
        appendVarint(field << 3)
        appendVarint(value)
    }

    mutating func bytes(_ field: UInt64, _ value: [UInt8]) {
        appendVarint(field << 3 | 2)
        appendVarint(UInt64(value.count))
        bytes += value
    }

    mutating func message(_ field: UInt64, _ encoded: [UInt8]) { bytes(field, encoded) }

    /// A packed repeated field; an empty list is left out, as protobuf does.
    mutating func packedVarints(_ field: UInt64, _ values: [UInt64]) {
        guard !values.isEmpty else { return }
        var packed = ProtobufWriter()
        for value in values { packed.appendVarint(value) }
        bytes(field, packed.bytes)
    }

    private mutating func appendVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }
}

/// Lowercase hex, for messages that name digests.
enum DFUHex {
    static func string(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
    }
}
