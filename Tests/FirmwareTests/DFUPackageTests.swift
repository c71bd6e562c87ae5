import Crypto
import Foundation
import Testing

@testable import Wearables
@testable import SimulatedWearables
@testable import Firmware

// MARK: - Helpers

/// The error `body` throws, or nil (recorded as an issue) if it does not throw.
private func dfuError<Value>(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws(DFUPackageError) -> Value
) -> DFUPackageError? {
    do {
        let value = try body()
        Issue.record("expected a DFUPackageError, got \(value)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// The reason of a `malformedInitPacket`, or nil.
private func malformedReason(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> String? {
    let error = dfuError(sourceLocation: sourceLocation) { () throws(DFUPackageError) in try DFUInitPacket(decoding: bytes) }
    guard case .malformedInitPacket(let reason) = error else {
        Issue.record("expected malformedInitPacket, got \(String(describing: error))", sourceLocation: sourceLocation)
        return nil
    }
    return reason
}

/// A length-delimited field with a one-byte length, as the hand-written vectors need.
private func field(_ number: UInt8, _ payload: [UInt8]) -> [UInt8] {
    precondition(payload.count < 128)
    return [number << 3 | 2, UInt8(payload.count)] + payload
}

/// Packet { command { op_code INIT, init { … } } } around hand-written InitCommand bytes.
private func unsignedPacket(initCommand: [UInt8]) -> [UInt8] {
    field(1, [0x08, 0x01] + field(2, initCommand))
}

private let firmware: [UInt8] = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

private func hex(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

/// A directory under the system's temporary directory with a unique name, removed by `remove()`.
private struct ScratchDirectory {
    let url: URL
    var path: String { url.path }

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("dfu-package-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func write(_ bytes: [UInt8], to name: String) throws {
        try Data(bytes).write(to: url.appendingPathComponent(name))
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

private func sha256Hex(_ bytes: [UInt8]) -> String {
    SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
}

// MARK: - Init packet

@Suite("DFU init packet")
struct DFUInitPacketTests {
    /// fw_version 1, hw_version 52, sd_req [0xFFFE], APPLICATION, sizes 0/0/4, CRC hash AA BB CC DD, not debug.
    static let smallPacket = DFUInitPacket(
        firmwareType: .application, firmwareVersion: 1, hardwareVersion: 52, softDeviceRequired: [0xFFFE],
        applicationSize: 4, hashType: .crc, hash: [0xAA, 0xBB, 0xCC, 0xDD])

    static let smallInitCommand: [UInt8] = [
        0x08, 0x01,  // fw_version (1, varint) = 1
        0x10, 0x34,  // hw_version (2, varint) = 52
        0x1A, 0x03, 0xFE, 0xFF, 0x03,  // sd_req (3, packed) = [0xFFFE]: 0xFFFE as varint is FE FF 03
        0x20, 0x00,  // type (4) = APPLICATION
        0x28, 0x00,  // sd_size (5) = 0
        0x30, 0x00,  // bl_size (6) = 0
        0x38, 0x04,  // app_size (7) = 4
        0x42, 0x08,  // hash (8, message of 8 bytes)
        0x08, 0x01,  //   hash_type (1) = CRC
        0x12, 0x04, 0xAA, 0xBB, 0xCC, 0xDD,  //   hash (2) = AA BB CC DD
        0x48, 0x00,  // is_debug (9) = false
    ]

    static let smallPacketBytes: [UInt8] =
        [0x0A, 0x21]  // Packet.command (1), 33 bytes
        + [0x08, 0x01]  // Command.op_code (1) = INIT
        + [0x12, 0x1D]  // Command.init (2), 29 bytes
        + smallInitCommand

    @Test("a small InitCommand encodes to the bytes written out field by field, and decodes back")
    func handWrittenVector() throws {
        #expect(Self.smallInitCommand.count == 0x1D)
        #expect(Self.smallPacket.encodedInitCommand() == Self.smallInitCommand)
        #expect(Self.smallPacket.encoded() == Self.smallPacketBytes)
        let decoded = try DFUInitPacket(decoding: Self.smallPacketBytes)
        #expect(decoded == Self.smallPacket)
        #expect(!decoded.isSigned)
    }

    @Test("a signed packet is Packet.signed_command { command, signature_type, signature }")
    func signedVector() throws {
        var packet = Self.smallPacket
        packet.signature = .init(type: .ecdsaP256SHA256, bytes: [0x01, 0x02, 0x03])
        let command: [UInt8] = [0x08, 0x01, 0x12, 0x1D] + Self.smallInitCommand
        let expected: [UInt8] =
            [0x12, 0x2A]  // Packet.signed_command (2), 42 bytes
            + [0x0A, 0x21] + command  // SignedCommand.command (1)
            + [0x10, 0x00]  // signature_type (2) = ECDSA_P256_SHA256
            + [0x1A, 0x03, 0x01, 0x02, 0x03]  // signature (3)
        #expect(packet.encoded() == expected)
        let decoded = try DFUInitPacket(decoding: expected)
        #expect(decoded == packet)
        #expect(decoded.isSigned)
        #expect(decoded.signature?.bytes == [0x01, 0x02, 0x03])
    }

    @Test("every firmware type round-trips, signed and unsigned, with multi-byte varints")
    func roundTrips() throws {
        let key = P256.Signing.PrivateKey()
        for type in DFUInitPacket.FirmwareType.allCases {
            let packet = DFUInitPacket(
                describing: firmware, as: type, firmwareVersion: 0xFFFF_FFFF, hardwareVersion: 0x52840,
                softDeviceRequired: [0xB7, 0x0101, 0xFFFE], softDeviceSizeOfCombined: 600, isDebug: true)
            #expect(try DFUInitPacket(decoding: packet.encoded()) == packet)
            let signed = packet.signed(with: key)
            let decoded = try DFUInitPacket(decoding: signed.encoded())
            #expect(decoded == signed)
            #expect(decoded.signature?.type == .ecdsaP256SHA256)
            #expect(decoded.signature?.bytes.count == 64)
        }
    }

    @Test("the signature is nrfutil's: ECDSA P-256 over the InitCommand, r and s each stored reversed")
    func signatureByteOrder() throws {
        let key = P256.Signing.PrivateKey()
        let signed = Self.smallPacket.signed(with: key)
        let stored = try #require(signed.signature?.bytes)
        let raw = Array(stored.prefix(32).reversed()) + Array(stored.suffix(32).reversed())
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: raw)
        #expect(key.publicKey.isValidSignature(signature, for: Self.smallInitCommand))
    }

    @Test("fields the schema does not know are skipped by wire type, in every message")
    func unknownFieldsSkipped() throws {
        let initCommand =
            Self.smallInitCommand
            + field(10, [0x08, 0x01, 0x12, 0x00])  // boot_validation of newer nrfutil, length-delimited
            + [0xA0, 0x01, 0x96, 0x01]  // field 20, varint 150
            + [0xA9, 0x01] + [UInt8](repeating: 0xEE, count: 8)  // field 21, fixed64
            + [0xB5, 0x01] + [UInt8](repeating: 0xDD, count: 4)  // field 22, fixed32
        let command = [0x08, 0x01] + field(2, initCommand) + [0x20, 0x05]  // Command field 4, varint
        let packet = field(1, command) + [0x28, 0x07]  // Packet field 5
        #expect(try DFUInitPacket(decoding: packet) == Self.smallPacket)
    }

    @Test("sd_req is accepted unpacked too, as protobuf parsers must")
    func unpackedRepeated() throws {
        let initCommand: [UInt8] = [0x18, 0xFE, 0xFF, 0x03, 0x18, 0x01] + field(3, [0xB7, 0x01])
        let decoded = try DFUInitPacket(decoding: unsignedPacket(initCommand: initCommand))
        #expect(decoded.softDeviceRequired == [0xFFFE, 1, 0xB7])
    }

    @Test("a field given twice keeps the last value")
    func lastValueWins() throws {
        let decoded = try DFUInitPacket(decoding: unsignedPacket(initCommand: [0x08, 0x01, 0x08, 0x02]))
        #expect(decoded.firmwareVersion == 2)
    }

    @Test("every proper prefix of a packet is refused as malformed")
    func everyPrefixRefused() {
        for length in 0..<Self.smallPacketBytes.count {
            #expect(malformedReason(Array(Self.smallPacketBytes.prefix(length))) != nil, "prefix of \(length)")
        }
    }

    @Test("a varint cut off at the end of its message is refused")
    func truncatedVarint() {
        let reason = malformedReason(field(1, [0x08, 0x81]))
        #expect(reason?.contains("not a protobuf Packet") == true, "\(reason ?? "")")
    }

    @Test("a length that runs past the end is a truncated packet")
    func truncatedLength() {
        let reason = malformedReason([0x0A, 0x21, 0x08, 0x01])
        #expect(reason?.contains("ends inside a field") == true, "\(reason ?? "")")
    }

    @Test("a varint longer than 64 bits is refused")
    func overlongVarint() {
        let reason = malformedReason(unsignedPacket(initCommand: [0x08] + [UInt8](repeating: 0xFF, count: 10) + [0x01]))
        #expect(reason?.contains("longer than 64 bits") == true, "\(reason ?? "")")
    }

    @Test("a known field with the wrong wire type names the field")
    func wrongWireType() {
        let reason = malformedReason(unsignedPacket(initCommand: [0x0A, 0x01, 0x00]))
        #expect(reason?.contains("InitCommand.fw_version") == true, "\(reason ?? "")")
        #expect(reason?.contains("wire type 2") == true, "\(reason ?? "")")
        #expect(malformedReason([0x08, 0x01]) != nil)  // Packet.command as a varint
        #expect(malformedReason(unsignedPacket(initCommand: [0x40, 0x03])) != nil)  // hash as a varint
    }

    @Test("a packet without an init command is refused, however it lacks it")
    func missingInit() {
        #expect(malformedReason([])?.contains("no command") == true)
        #expect(malformedReason(field(1, [0x08, 0x01]))?.contains("no init command") == true)
        #expect(malformedReason(field(1, [0x08, 0x00]) + [])?.contains("no init command") == true)
        #expect(malformedReason(field(1, [0x08, 0x00] + field(2, [])))?.contains("op_code is 0") == true)
        #expect(malformedReason([0x28, 0x07]) != nil)  // only an unknown field
    }

    @Test("a packet with both an unsigned and a signed command is refused, as the bootloader does")
    func bothCommands() {
        let command = [0x08, 0x01] + field(2, Self.smallInitCommand)
        let signed = field(1, command) + [0x10, 0x00] + field(3, [0x01])
        #expect(malformedReason(field(1, command) + field(2, signed))?.contains("both") == true)
    }

    @Test("a signed command without a signature type is refused")
    func signedWithoutType() {
        let command = [0x08, 0x01] + field(2, Self.smallInitCommand)
        #expect(malformedReason(field(2, field(1, command)))?.contains("signature_type") == true)
    }

    @Test("enum values outside the schema, unclosed groups, undefined wire types, field 0 and cut fixed32 are refused")
    func outOfSchema() {
        #expect(malformedReason(unsignedPacket(initCommand: [0x20, 0x09]))?.contains("type is 9") == true)
        #expect(malformedReason(unsignedPacket(initCommand: field(8, [0x08, 0x07])))?.contains("hash_type is 7") == true)
        for initCommand: [UInt8] in [[0xA3, 0x01], [0xA6, 0x01], [0x00, 0x00], [0xAD, 0x01, 0x00]] {
            let reason = malformedReason(unsignedPacket(initCommand: initCommand))
            #expect(reason?.contains("not a protobuf Packet") == true, "\(initCommand): \(reason ?? "accepted")")
        }
    }

    @Test("a uint32 written as a longer varint keeps its low 32 bits, as protobuf reads it (nanopb would refuse it)")
    func overlongUInt32() throws {
        // fw_version = 2^32 + 5: 85 80 80 80 10
        let decoded = try DFUInitPacket(decoding: unsignedPacket(initCommand: [0x08, 0x85, 0x80, 0x80, 0x80, 0x10]))
        #expect(decoded.firmwareVersion == 5)
    }

    @Test("nrfutil stores the SHA-256 reversed: sha256(\"abc\") = ba7816bf…15ad is stored ad1500f2…16ba")
    func storedSHA256IsReversed() {
        let stored = DFUInitPacket.storedSHA256(of: Array("abc".utf8))
        #expect(stored == hex("ad1500f261ff10b49c7a1796a36103b02322ae5dde404141eacf018fbf1678ba"))
    }

    @Test("an image matches when its size and reversed SHA-256 do, and not when either differs")
    func imageDigestSHA256() {
        let packet = DFUInitPacket(describing: firmware, as: .application, firmwareVersion: 1, hardwareVersion: 52)
        #expect(packet.applicationSize == 1000)
        #expect(packet.hashType == .sha256)
        #expect(packet.imageDigestMatches(firmware))
        var flipped = firmware
        flipped[500] ^= 0x01
        #expect(!packet.imageDigestMatches(flipped))
        #expect(!packet.imageDigestMatches(Array(firmware.dropLast())))
        var forward = packet
        forward.hash = Array(SHA256.hash(data: firmware))
        #expect(!forward.imageDigestMatches(firmware), "the unreversed digest must not match")
    }

    @Test("the size checked follows the type: sd_size + bl_size for a combined image")
    func imageSizeByType() {
        let combined = DFUInitPacket(
            describing: firmware, as: .softDeviceBootloader, firmwareVersion: 1, hardwareVersion: 52,
            softDeviceSizeOfCombined: 700)
        #expect(combined.softDeviceSize == 700)
        #expect(combined.bootloaderSize == 300)
        #expect(combined.applicationSize == 0)
        #expect(combined.imageDigestMatches(firmware))
        let bootloader = DFUInitPacket(describing: firmware, as: .bootloader, firmwareVersion: 1, hardwareVersion: 52)
        #expect(bootloader.bootloaderSize == 1000)
        #expect(bootloader.imageDigestMatches(firmware))
    }

    @Test("a CRC hash is zlib CRC-32 little-endian; NO_HASH accepts any image of the right size")
    func imageDigestCRCAndNoHash() {
        let check = Array("123456789".utf8)  // CRC-32 check value 0xCBF43926
        let crc = DFUInitPacket(
            firmwareType: .application, firmwareVersion: 1, hardwareVersion: 1, applicationSize: 9, hashType: .crc,
            hash: [0x26, 0x39, 0xF4, 0xCB])
        #expect(crc.imageDigestMatches(check))
        #expect(!crc.imageDigestMatches(Array("123456780".utf8)))
        let none = DFUInitPacket(
            firmwareType: .application, firmwareVersion: 1, hardwareVersion: 1, applicationSize: 9, hashType: .noHash,
            hash: [])
        #expect(none.imageDigestMatches(Array("anything!".utf8)))
        #expect(!none.imageDigestMatches(Array("too short".utf8.dropLast())))
    }
}

// MARK: - Package

@Suite("DFU package")
struct DFUPackageTests {
    static let limit = 1 << 20

    private func packageError(_ bytes: [UInt8], limit: Int = limit) -> DFUPackageError? {
        dfuError { () throws(DFUPackageError) in try DFUPackage(data: bytes, maximumSize: limit) }
    }

    @Test("an application package from the builder reads back with its init packet parsed and checked")
    func applicationRoundTrip() throws {
        let zip = DFUPackageBuilder.application(firmware: firmware, firmwareVersion: 7)
        let package = try DFUPackage(data: zip, maximumSize: Self.limit)
        #expect(package.images.count == 1)
        let image = try #require(package.images.first)
        #expect(image.kind == .application)
        #expect(image.firmware == firmware)
        #expect(image.binFile == "application.bin")
        #expect(image.datFile == "application.dat")
        let parsed = try #require(image.parsedInit)
        #expect(parsed.firmwareVersion == 7)
        #expect(parsed.hardwareVersion == 52)
        #expect(parsed.applicationSize == 1000)
        #expect(parsed.encoded() == image.initPacket)
        #expect(!parsed.isSigned)
        #expect(try DFUPackage(data: zip, maximumSize: Self.limit) == package)
    }

    @Test("a signed application package carries a 64-byte ECDSA signature")
    func signedApplication() throws {
        let package = try DFUPackage(
            data: DFUPackageBuilder.application(firmware: firmware, firmwareVersion: 2, signed: true), maximumSize: Self.limit)
        let parsed = try #require(package.images.first?.parsedInit)
        #expect(parsed.isSigned)
        #expect(parsed.signature?.bytes.count == 64)
    }

    @Test("images come in sending order: SoftDevice+bootloader or SoftDevice and bootloader first, application last")
    func sendingOrder() throws {
        let application = DFUPackageBuilder.Image.described(.application, firmware: firmware, firmwareVersion: 3)
        let combined = DFUPackageBuilder.Image.described(
            .softDeviceBootloader, firmware: Array(firmware.reversed()), firmwareVersion: 2, softDeviceSizeOfCombined: 800)
        let package = try DFUPackage(data: DFUPackageBuilder.package([application, combined]), maximumSize: Self.limit)
        #expect(package.images.map(\.kind) == [.softDeviceBootloader, .application])
        #expect(package.images[0].softDeviceSize == 800)
        #expect(package.images[0].bootloaderSize == 200)
        #expect(package.images[0].parsedInit?.firmwareType == .softDeviceBootloader)

        let softDevice = DFUPackageBuilder.Image.described(.softDevice, firmware: [1, 2, 3], firmwareVersion: 1)
        let bootloader = DFUPackageBuilder.Image.described(.bootloader, firmware: [4, 5], firmwareVersion: 1)
        let three = try DFUPackage(data: DFUPackageBuilder.package([application, bootloader, softDevice]), maximumSize: Self.limit)
        #expect(three.images.map(\.kind) == [.softDevice, .bootloader, .application])
    }

    @Test("a deflated package reads the same as a stored one")
    func compressed() throws {
        let images = [DFUPackageBuilder.Image.described(.application, firmware: firmware, firmwareVersion: 1)]
        let stored = try DFUPackage(data: DFUPackageBuilder.package(images), maximumSize: Self.limit)
        let deflated = try DFUPackage(data: DFUPackageBuilder.package(images, compressed: true), maximumSize: Self.limit)
        #expect(stored == deflated)
    }

    @Test("a legacy package's .dat is kept raw, with no parsed init and no mismatch check")
    func legacyInitPacket() throws {
        // Legacy DFU init packet: device type, revision, app version, 1 SoftDevice (0xFFFE), CRC-16.
        let legacy: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x00, 0xFE, 0xFF, 0x12, 0x34]
        let image = DFUPackageBuilder.Image(kind: .application, firmware: firmware, initPacket: legacy)
        let package = try DFUPackage(data: DFUPackageBuilder.package([image]), maximumSize: Self.limit)
        #expect(package.images.first?.initPacket == legacy)
        #expect(package.images.first?.parsedInit == nil)
        #expect(package.images.first?.initPacketParseError != nil)
    }

    @Test("keys the reader does not know, such as legacy init_packet_data and dfu_version, are tolerated")
    func extraManifestKeys() throws {
        let image = DFUPackageBuilder.Image.described(.application, firmware: firmware, firmwareVersion: 1)
        let manifest = """
            {"manifest": {"dfu_version": 0.5, "application": {"bin_file": "application.bin",
             "dat_file": "application.dat", "init_packet_data": {"application_version": 4294967295,
             "device_revision": 65535, "device_type": 65535, "firmware_crc16": 4660, "softdevice_req": [65534]}}}}
            """
        let zip = DFUPackageBuilder.zip([
            ("manifest.json", Array(manifest.utf8)), ("application.bin", image.firmware),
            ("application.dat", image.initPacket),
        ])
        #expect(try DFUPackage(data: zip, maximumSize: Self.limit).images.count == 1)
    }

    // MARK: Errors

    @Test("bytes that are not a zip are notAZip")
    func notAZip() {
        #expect(packageError(Array("manifest.json".utf8)) == .notAZip)
        #expect(packageError([]) == .notAZip)
        #expect(packageError(firmware) == .notAZip)
    }

    @Test("a package over the limit is refused before unzipping")
    func tooLarge() {
        let zip = DFUPackageBuilder.application(firmware: firmware, firmwareVersion: 1)
        #expect(packageError(zip, limit: zip.count - 1) == .tooLarge(bytes: zip.count, limit: zip.count - 1))
        #expect(DFUPackageError.tooLarge(bytes: 10, limit: 5).message.contains("10 bytes"))
    }

    @Test("a small zip whose entries declare more than the limit is refused before inflating (zip bomb)")
    func zipBomb() throws {
        let zeros = [UInt8](repeating: 0, count: 4 << 20)
        let image = DFUPackageBuilder.Image.described(.application, firmware: zeros, firmwareVersion: 1)
        let zip = DFUPackageBuilder.package([image], compressed: true)
        #expect(zip.count < 64 << 10)
        guard case .expandsTooLarge(let bytes, let limit) = packageError(zip, limit: 1 << 20) else {
            Issue.record("expected expandsTooLarge")
            return
        }
        #expect(bytes > 1 << 20)
        #expect(limit == 1 << 20)
    }

    @Test("an entry that inflates to more than its header declares is stopped while inflating")
    func understatedSize() throws {
        let zeros = [UInt8](repeating: 0, count: 256 << 10)
        var zip = DFUPackageBuilder.zip([("manifest.json", zeros)], compressed: true)
        // Declare 100 bytes in the local header (offset 22) and the central directory (offset 24).
        patchUInt32(&zip, signature: [0x50, 0x4B, 0x03, 0x04], offset: 22, value: 100)
        patchUInt32(&zip, signature: [0x50, 0x4B, 0x01, 0x02], offset: 24, value: 100)
        guard case .corruptEntry(let name, let reason) = packageError(zip) else {
            Issue.record("expected corruptEntry")
            return
        }
        #expect(name == "manifest.json")
        #expect(reason.contains("more than the 100 bytes"))
    }

    @Test("an entry whose bytes do not match its CRC-32 is corrupt")
    func crcMismatch() throws {
        var zip = DFUPackageBuilder.application(firmware: firmware, firmwareVersion: 1)
        let start = try #require(firstIndex(of: Array(firmware.prefix(16)), in: zip))
        zip[start + 100] ^= 0xFF
        #expect(packageError(zip) == .corruptEntry(name: "application.bin", reason: "its CRC-32 does not match"))
    }

    @Test("a zip without manifest.json is not a DFU package")
    func missingManifest() {
        #expect(packageError(DFUPackageBuilder.zip([("application.bin", firmware)])) == .missingManifest)
    }

    @Test("a manifest that is not JSON, or not the expected shape, is invalid with a reason")
    func invalidManifest() {
        func error(_ manifest: String) -> DFUPackageError? {
            let image = DFUPackageBuilder.Image.described(.application, firmware: firmware, firmwareVersion: 1)
            return packageError(DFUPackageBuilder.zip([
                ("manifest.json", Array(manifest.utf8)), ("application.bin", image.firmware),
                ("application.dat", image.initPacket),
            ]))
        }
        #expect(error("{not json") == .invalidManifest("it is not JSON: expected a quoted key but found character 'n' at byte 1"))
        #expect(error("[1, 2]") == .invalidManifest("it has no \"manifest\" object at the top"))
        #expect(error(#"{"application": {}}"#) == .invalidManifest("it has no \"manifest\" object at the top"))
        #expect(error(#"{"manifest": {"dfu_version": 0.5}}"#)
            == .invalidManifest("it names no image (softdevice_bootloader, softdevice, bootloader, application, "
                + "softdevice_application, bootloader_application, softdevice_bootloader_application)"))
        #expect(error(#"{"manifest": {"application": "application.bin"}}"#)
            == .invalidManifest("\"application\" is not an object"))
        #expect(error(#"{"manifest": {"application": {"dat_file": "application.dat"}}}"#)
            == .invalidManifest("\"application\" has no \"bin_file\" name"))
        #expect(error(#"{"manifest": {"application": {"bin_file": "application.bin", "dat_file": 3}}}"#)
            == .invalidManifest("\"application\" has no \"dat_file\" name"))
        #expect(error(#"{"manifest": {"application": {"bin_file": "application.bin", "dat_file": "application.dat", "info_read_only_metadata": 5}}}"#)
            == .invalidManifest("\"application.info_read_only_metadata\" is not an object"))
        #expect(error(#"{"manifest": {"application": {"bin_file": "application.bin", "dat_file": "application.dat", "info_read_only_metadata": {"sd_size": "big"}}}}"#)
            == .invalidManifest("\"application.info_read_only_metadata.sd_size\" is not a size in bytes"))
    }

    @Test("metadata whose sd_size + bl_size is not the image's size is invalid")
    func metadataSizeMismatch() {
        var image = DFUPackageBuilder.Image.described(
            .softDeviceBootloader, firmware: firmware, firmwareVersion: 1, softDeviceSizeOfCombined: 600)
        image.bootloaderSize = 300
        guard case .invalidManifest(let reason) = packageError(DFUPackageBuilder.package([image])) else {
            Issue.record("expected invalidManifest")
            return
        }
        #expect(reason.contains("sd_size 600 + bl_size 300"))
    }

    @Test("a file the manifest names but the zip lacks is missingFile")
    func missingFile() {
        let image = DFUPackageBuilder.Image.described(.application, firmware: firmware, firmwareVersion: 1)
        let manifest = DFUPackageBuilder.manifest(for: [image])
        #expect(packageError(DFUPackageBuilder.zip([("manifest.json", manifest), ("application.dat", image.initPacket)]))
            == .missingFile("application.bin"))
        #expect(packageError(DFUPackageBuilder.zip([("manifest.json", manifest), ("application.bin", image.firmware)]))
            == .missingFile("application.dat"))
    }

    @Test("an empty image or an empty init packet is refused")
    func emptyFiles() {
        let emptyImage = DFUPackageBuilder.Image(
            kind: .application, firmware: [],
            initPacket: DFUInitPacket(describing: [], as: .application, firmwareVersion: 1, hardwareVersion: 52).encoded())
        #expect(packageError(DFUPackageBuilder.package([emptyImage])) == .emptyFile("application.bin"))
        let emptyInit = DFUPackageBuilder.Image(kind: .application, firmware: firmware, initPacket: [])
        #expect(packageError(DFUPackageBuilder.package([emptyInit])) == .emptyFile("application.dat"))
    }

    @Test("an init packet for another size, another hash or another kind of image is a mismatch")
    func initPacketMismatch() {
        func reason(_ image: DFUPackageBuilder.Image) -> String? {
            guard case .initPacketMismatch(let file, let reason) = packageError(DFUPackageBuilder.package([image])) else {
                Issue.record("expected initPacketMismatch")
                return nil
            }
            #expect(file == image.datFile)
            return reason
        }
        var shorter = DFUPackageBuilder.Image.described(.application, firmware: firmware, firmwareVersion: 1)
        shorter.firmware.removeLast()
        #expect(reason(shorter) == "the init packet announces 1000 bytes, the image has 999")

        var altered = DFUPackageBuilder.Image.described(.application, firmware: firmware, firmwareVersion: 1)
        altered.firmware[0] ^= 0xFF
        #expect(reason(altered)?.contains("SHA256") == true)

        let bootloaderInit = DFUPackageBuilder.Image.described(.bootloader, firmware: firmware, firmwareVersion: 1)
        let listedAsApplication = DFUPackageBuilder.Image(
            kind: .application, firmware: firmware, initPacket: bootloaderInit.initPacket)
        #expect(reason(listedAsApplication)?.contains("BOOTLOADER image") == true)
    }

    @Test("every error has a sentence for a person")
    func messages() {
        let errors: [DFUPackageError] = [
            .malformedInitPacket("x"), .notAZip, .unsupportedZip("ZIP64"), .tooLarge(bytes: 2, limit: 1), .expandsTooLarge(bytes: 2, limit: 1),
            .corruptEntry(name: "a", reason: "b"), .missingManifest, .invalidManifest("x"), .missingFile("a"),
            .emptyFile("a"), .initPacketMismatch(file: "a", reason: "b"), .invalidFileName(name: "a", reason: "b"),
            .directoryNotFound("a"), .fileNotFound("a"), .unreadable(name: "a", reason: "b"),
            .invalidChecksum("a"), .checksumMismatch(expected: "a"),
        ]
        for error in errors {
            #expect(error.message.first?.isUppercase == true && error.message.hasSuffix("."), "\(error)")
            #expect(error.description == error.message)
        }
    }

    private func patchUInt32(_ bytes: inout [UInt8], signature: [UInt8], offset: Int, value: UInt32) {
        guard let start = firstIndex(of: signature, in: bytes) else {
            Issue.record("no zip header \(signature)")
            return
        }
        for index in 0..<4 { bytes[start + offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
    }

    private func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }
}

// MARK: - File under dfu.dir

@Suite("DFU package file")
struct DFUPackageFileTests {
    static let limit = 1 << 20
    let zip = DFUPackageBuilder.application(firmware: firmware, firmwareVersion: 9)

    private func loadError(_ name: String, directory: String, sha256: String? = nil, limit: Int = limit) -> DFUPackageError? {
        dfuError { () throws(DFUPackageError) in
            try DFUPackageFile.load(
                name: name, directory: directory, expectedSHA256: sha256 ?? sha256Hex(zip), maximumSize: limit)
        }
    }

    @Test("a file under the directory with the right SHA-256 (any case) loads as a package")
    func loads() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.url.appendingPathComponent("band"), withIntermediateDirectories: true)
        try directory.write(zip, to: "band/app.zip")
        let package = try DFUPackageFile.load(
            name: "band/app.zip", directory: directory.path, expectedSHA256: sha256Hex(zip).uppercased(),
            maximumSize: Self.limit)
        #expect(package.images.first?.parsedInit?.firmwareVersion == 9)
        // A directory given with a trailing slash, and a name through "./", are the same file.
        _ = try DFUPackageFile.load(
            name: "./band/app.zip", directory: directory.path + "/", expectedSHA256: sha256Hex(zip), maximumSize: Self.limit)
    }

    @Test("absolute names, \"..\" components and empty names are refused by their text")
    func refusedNames() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        try directory.write(zip, to: "app.zip")
        for name in ["../app.zip", "sub/../app.zip", "..", "a/.."] {
            guard case .invalidFileName(let refused, let reason) = loadError(name, directory: directory.path) else {
                Issue.record("\(name) was not refused")
                continue
            }
            #expect(refused == name)
            #expect(reason.contains(".."))
        }
        guard case .invalidFileName(_, let reason) = loadError(directory.path + "/app.zip", directory: directory.path) else {
            Issue.record("an absolute name was not refused")
            return
        }
        #expect(reason.contains("absolute"))
        guard case .invalidFileName = loadError("", directory: directory.path) else {
            Issue.record("an empty name was not refused")
            return
        }
    }

    @Test("a symlink that leads outside the directory reads as a missing file; one that stays inside is followed")
    func symlinks() throws {
        let directory = try ScratchDirectory()
        let outside = try ScratchDirectory()
        defer {
            directory.remove()
            outside.remove()
        }
        try outside.write(zip, to: "secret.zip")
        let manager = FileManager.default
        try manager.createSymbolicLink(
            atPath: directory.path + "/escape.zip", withDestinationPath: outside.path + "/secret.zip")
        try manager.createSymbolicLink(atPath: directory.path + "/elsewhere", withDestinationPath: outside.path)
        #expect(loadError("escape.zip", directory: directory.path) == .fileNotFound("escape.zip"))
        #expect(loadError("elsewhere/secret.zip", directory: directory.path) == .fileNotFound("elsewhere/secret.zip"))
        // Whether the target outside exists is not told: a dangling link out reads the same.
        try manager.createSymbolicLink(atPath: directory.path + "/dangling.zip", withDestinationPath: outside.path + "/none.zip")
        #expect(loadError("dangling.zip", directory: directory.path) == .fileNotFound("dangling.zip"))
        try manager.createSymbolicLink(atPath: directory.path + "/passwd.zip", withDestinationPath: "/etc/passwd")
        #expect(loadError("passwd.zip", directory: directory.path)?.message
            == DFUPackageError.fileNotFound("passwd.zip").message)

        try directory.write(zip, to: "real.zip")
        try manager.createSymbolicLink(atPath: directory.path + "/latest.zip", withDestinationPath: "real.zip")
        let package = try DFUPackageFile.load(
            name: "latest.zip", directory: directory.path, expectedSHA256: sha256Hex(zip), maximumSize: Self.limit)
        #expect(package.images.count == 1)
    }

    @Test("a missing file or directory, and a directory where a file should be, are named as such")
    func missing() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        #expect(loadError("none.zip", directory: directory.path) == .fileNotFound("none.zip"))
        #expect(loadError("none/none.zip", directory: directory.path) == .fileNotFound("none/none.zip"))
        #expect(loadError("a.zip", directory: directory.path + "/absent") == .directoryNotFound(directory.path + "/absent"))
        try FileManager.default.createDirectory(at: directory.url.appendingPathComponent("folder.zip"), withIntermediateDirectories: true)
        #expect(loadError("folder.zip", directory: directory.path)
            == .unreadable(name: "folder.zip", reason: "it is not a regular file"))
    }

    @Test("a SHA-256 mismatch says \"does not match\" and never the file's real digest")
    func checksumMismatch() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        try directory.write(zip, to: "app.zip")
        let wrong = String(repeating: "ab", count: 32)
        let error = loadError("app.zip", directory: directory.path, sha256: wrong)
        #expect(error == .checksumMismatch(expected: wrong))
        #expect(error?.message.contains("does not match") == true)
        #expect(error?.message.contains(sha256Hex(zip)) == false)
        #expect(error?.message.lowercased().contains(sha256Hex(zip).prefix(8)) == false)
    }

    @Test("a FIFO, a device node and a symlink to either are refused at once as not regular files, never opened to wait")
    func specialFiles() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        // Opening a FIFO for reading waits for a writer: before the fix this load never returned.
        #expect(mkfifo(directory.path + "/pipe.zip", 0o644) == 0)
        #expect(loadError("pipe.zip", directory: directory.path)
            == .unreadable(name: "pipe.zip", reason: "it is not a regular file"))
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/latest.zip", withDestinationPath: "pipe.zip")
        #expect(loadError("latest.zip", directory: directory.path)
            == .unreadable(name: "latest.zip", reason: "it is not a regular file"))
        // A character device like /dev/null (major 1, minor 3: 0x0103 in glibc's makedev encoding), where the test
        // may create one (as root); read, it would be an empty file.
        if mknod(directory.path + "/null.zip", S_IFCHR | 0o644, dev_t(0x0103)) == 0 {
            #expect(loadError("null.zip", directory: directory.path)
                == .unreadable(name: "null.zip", reason: "it is not a regular file"))
        }
    }

    @Test("random names built from hostile parts never block, never read outside and fail only as names or missing files")
    func fuzzedNames() throws {
        let directory = try ScratchDirectory()
        let outside = try ScratchDirectory()
        defer {
            directory.remove()
            outside.remove()
        }
        try directory.write(zip, to: "app.zip")
        try outside.write(zip, to: "secret.zip")
        #expect(mkfifo(directory.path + "/pipe.zip", 0o644) == 0)
        try FileManager.default.createDirectory(at: directory.url.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/out", withDestinationPath: outside.path)
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/loop", withDestinationPath: "loop")
        let parts = ["..", ".", "", "app.zip", "pipe.zip", "sub", "out", "loop", "secret.zip", "\u{0}", "/", "é", "app.zip\n"]
        var generator = DFUInitPacketFuzzTests.SplitMix64(state: 24)
        for _ in 0..<2_000 {
            let count = Int.random(in: 1...4, using: &generator)
            let name = (0..<count).map { _ in parts.randomElement(using: &generator)! }.joined(separator: "/")
            // A wrong digest: whatever the name, no package comes back, and the error tells nothing of outside.
            switch loadError(name, directory: directory.path, sha256: String(repeating: "0", count: 64)) {
            case .invalidFileName?, .fileNotFound?, .checksumMismatch?:
                break
            case .unreadable(_, let reason)?:
                #expect(reason == "it is not a regular file", "\(name)")
            case let other:
                Issue.record("\(name): \(String(describing: other))")
            }
        }
    }

    @Test("a sha256 that is not 64 hex digits is refused before the file is touched")
    func invalidChecksum() {
        for given in ["", "abc", String(repeating: "a", count: 63), String(repeating: "g", count: 64),
                      String(repeating: "a", count: 65)] {
            #expect(loadError("../anything", directory: "/nonexistent", sha256: given) == .invalidChecksum(given))
        }
    }

    @Test("a file over the size limit is refused")
    func sizeLimit() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        try directory.write(zip, to: "app.zip")
        #expect(loadError("app.zip", directory: directory.path, limit: zip.count - 1)
            == .tooLarge(bytes: zip.count, limit: zip.count - 1))
        #expect(try DFUPackageFile.load(
            name: "app.zip", directory: directory.path, expectedSHA256: sha256Hex(zip), maximumSize: zip.count
        ).images.count == 1)
    }

    @Test("a file with the right digest that is not a package fails as a package")
    func notAPackage() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        try directory.write(firmware, to: "app.bin")
        #expect(loadError("app.bin", directory: directory.path, sha256: sha256Hex(firmware)) == .notAZip)
    }
}
