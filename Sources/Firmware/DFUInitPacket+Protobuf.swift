import FoundationEssentials
import SwiftProtobuf

/// Reading and writing the init packet through the messages generated from `Protobuf/dfu-init.proto`.
///
/// swift-protobuf does the wire format; what stays here is what the schema cannot say and the SDK bootloader
/// checks (`nrf_dfu_validation.c`, `stored_init_cmd_decode` and the nanopb decoder under it): exactly one of the
/// unsigned and the signed command, an `INIT` op code, an init command, a signature type on a signed command,
/// enum values the schema defines, and a known field only with the wire type the schema gives it.
///
/// One divergence from nanopb, which refuses it: a uint32 field written as a varint longer than 32 bits is cut
/// to its low 32 bits, as protobuf's reference implementations (and swift-protobuf) read it. The device then
/// refuses the packet in its own words; nrfutil never writes one.
extension DFUInitPacket {
    // MARK: Encoding

    /// The packet as nrfutil writes it: every field set, in field-number order, unsigned as `Packet.command`
    /// and signed as `Packet.signed_command`.
    public func encoded() -> [UInt8] {
        var packet = Dfu_Packet()
        if let signature {
            var signedCommand = Dfu_SignedCommand()
            signedCommand.command = command
            signedCommand.signatureType = Dfu_SignatureType(rawValue: Int(signature.type.rawValue)) ?? .ecdsaP256Sha256
            signedCommand.signature = Data(signature.bytes)
            packet.signedCommand = signedCommand
        } else {
            packet.command = command
        }
        return Self.serialized(packet)
    }

    /// `Command { op_code = INIT, init }`.
    public func encodedCommand() -> [UInt8] { Self.serialized(command) }

    /// The `InitCommand` alone: what nrfutil signs.
    public func encodedInitCommand() -> [UInt8] { Self.serialized(initCommand) }

    private var command: Dfu_Command {
        var command = Dfu_Command()
        command.opCode = .init_
        command.init_p = initCommand
        return command
    }

    private var initCommand: Dfu_InitCommand {
        var message = Dfu_InitCommand()
        message.fwVersion = firmwareVersion
        message.hwVersion = hardwareVersion
        message.sdReq = softDeviceRequired
        message.type = Dfu_FwType(rawValue: Int(firmwareType.rawValue)) ?? .application
        message.sdSize = softDeviceSize
        message.blSize = bootloaderSize
        message.appSize = applicationSize
        var hashMessage = Dfu_Hash()
        hashMessage.hashType = Dfu_HashType(rawValue: Int(hashType.rawValue)) ?? .noHash
        hashMessage.hash = Data(hash)
        message.hash = hashMessage
        message.isDebug = isDebug
        return message
    }

    /// Serializing a message built from this type's fields cannot fail: it has no required fields to miss
    /// (proto3) and no map or `Any` to resolve.
    private static func serialized(_ message: some SwiftProtobuf.Message) -> [UInt8] {
        (try? message.serializedBytes() as [UInt8]) ?? []
    }

    // MARK: Decoding

    /// Reads a Secure DFU init packet. Bytes that are not protobuf, a known field with the wrong wire type, an enum
    /// value outside the schema, or a packet without exactly one command with an init command is
    /// `malformedInitPacket`. Fields the schema does not know are skipped (newer nrfutil may add some); a field
    /// given twice keeps the last value and merges messages, as protobuf does.
    public init(decoding bytes: [UInt8]) throws(DFUPackageError) {
        let packet: Dfu_Packet
        do {
            packet = try Dfu_Packet(serializedBytes: bytes)
        } catch let error as BinaryDecodingError {
            throw .malformedInitPacket("the init packet is not a protobuf Packet: \(Self.describe(error))")
        } catch {
            throw .malformedInitPacket("the init packet is not a protobuf Packet: \(error)")
        }
        try WireTypeCheck.packet(packet)

        let command: Dfu_Command
        switch (packet.hasCommand, packet.hasSignedCommand) {
        case (true, true):
            // The SDK bootloader refuses this too (`stored_init_cmd_decode`).
            throw .malformedInitPacket("the init packet holds both an unsigned and a signed command")
        case (true, false):
            command = packet.command
            signature = nil
        case (false, true):
            let signed = packet.signedCommand
            guard signed.hasSignatureType else { throw .malformedInitPacket("the signed command has no signature_type") }
            command = signed.command
            signature = Signature(type: try Self.known(signed.signatureType, "SignedCommand.signature_type"),
                                  bytes: Array(signed.signature))
        case (false, false):
            throw .malformedInitPacket("the init packet holds no command, so no init command")
        }
        guard command.hasInit_p else { throw .malformedInitPacket("the command has no init command") }
        if command.hasOpCode, command.opCode != .init_ {
            throw .malformedInitPacket("the command's op_code is \(command.opCode.rawValue), not INIT (1)")
        }
        let initCommand = command.init_p
        firmwareType = try Self.known(initCommand.type, "InitCommand.type")
        firmwareVersion = initCommand.fwVersion
        hardwareVersion = initCommand.hwVersion
        softDeviceRequired = initCommand.sdReq
        softDeviceSize = initCommand.sdSize
        bootloaderSize = initCommand.blSize
        applicationSize = initCommand.appSize
        hashType = try Self.known(initCommand.hash.hashType, "Hash.hash_type")
        hash = Array(initCommand.hash.hash)
        isDebug = initCommand.isDebug
    }

    /// The gateway's enum for a schema enum value, or the error that names the value and the schema's values.
    private static func known<Schema: SwiftProtobuf.Enum & CaseIterable, Value: RawRepresentable & CaseIterable>(
        _ value: Schema, _ field: String, as type: Value.Type = Value.self
    ) throws(DFUPackageError) -> Value where Value.RawValue == UInt32 {
        if value.rawValue >= 0, let known = Value(rawValue: UInt32(value.rawValue)) { return known }
        let values = Value.allCases.map { String($0.rawValue) }.joined(separator: ", ")
        throw .malformedInitPacket("\(field) is \(value.rawValue), not one of the values dfu-cc.proto defines (\(values))")
    }

    private static func describe(_ error: BinaryDecodingError) -> String {
        switch error {
        case .truncated: "it ends inside a field"
        case .malformedProtobuf: "a field key or length is invalid (field number 0, a wire type protobuf does not define, "
            + "a varint longer than 64 bits, or a group)"
        case .trailingGarbage: "bytes follow the message"
        case .messageDepthLimit: "messages are nested too deeply"
        default: "\(error)"
        }
    }
}

/// A known field given with the wrong wire type is not an error to protobuf, which keeps it among the unknown
/// fields; nanopb in the bootloader refuses the packet. This finds such fields in what swift-protobuf kept.
private enum WireTypeCheck {
    /// A schema field: its name and the wire types it may come with (0 varint, 2 length-delimited; `sd_req`
    /// either, packed or not).
    typealias Field = (name: String, wireTypes: Set<Int>)

    static let packetFields: [Int: Field] = [1: ("command", [2]), 2: ("signed_command", [2])]
    static let commandFields: [Int: Field] = [1: ("op_code", [0]), 2: ("init", [2]), 3: ("reset", [2])]
    static let signedCommandFields: [Int: Field] = [1: ("command", [2]), 2: ("signature_type", [0]), 3: ("signature", [2])]
    static let initCommandFields: [Int: Field] = [
        1: ("fw_version", [0]), 2: ("hw_version", [0]), 3: ("sd_req", [0, 2]), 4: ("type", [0]), 5: ("sd_size", [0]),
        6: ("bl_size", [0]), 7: ("app_size", [0]), 8: ("hash", [2]), 9: ("is_debug", [0]), 10: ("boot_validation", [2]),
    ]
    static let hashFields: [Int: Field] = [1: ("hash_type", [0]), 2: ("hash", [2])]

    static func packet(_ packet: Dfu_Packet) throws(DFUPackageError) {
        try check(packet.unknownFields, packetFields, "Packet")
        try command(packet.command)
        try check(packet.signedCommand.unknownFields, signedCommandFields, "SignedCommand")
        try command(packet.signedCommand.command)
    }

    private static func command(_ command: Dfu_Command) throws(DFUPackageError) {
        try check(command.unknownFields, commandFields, "Command")
        try check(command.init_p.unknownFields, initCommandFields, "InitCommand")
        try check(command.init_p.hash.unknownFields, hashFields, "Hash")
    }

    /// Walks the keys of `unknown` (well-formed: swift-protobuf has framed every field already).
    private static func check(_ unknown: UnknownStorage, _ fields: [Int: Field], _ message: String) throws(DFUPackageError) {
        let bytes = [UInt8](unknown.data)
        var index = 0
        func varint() -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while index < bytes.count, shift < 64 {
                let byte = bytes[index]
                index += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { break }
                shift += 7
            }
            return value
        }
        while index < bytes.count {
            let key = varint()
            let number = Int(truncatingIfNeeded: key >> 3)
            let wireType = Int(key & 7)
            if let field = fields[number], !field.wireTypes.contains(wireType) {
                let expected = field.wireTypes.sorted().map(String.init).joined(separator: " or ")
                throw .malformedInitPacket("\(message).\(field.name) (field \(number)) has wire type \(wireType); "
                                           + "dfu-cc.proto gives it wire type \(expected)")
            }
            switch wireType {
            case 0: _ = varint()
            case 1: index += 8
            case 2: index += Int(truncatingIfNeeded: varint())
            case 5: index += 4
            default: return
            }
        }
    }
}
