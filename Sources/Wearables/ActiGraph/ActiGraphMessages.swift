/// A request of the ActiGraph vendor service's Control characteristic with its payload typed
/// (docs/protocols/actigraph.md, "Vendor service"). The host encodes these; the simulated Link decodes them.
/// Ranges the Link checks and answers with a status (a rate it cannot run, a page outside the download) are
/// not the codec's: it only refuses what cannot be framed.
public enum ActiGraphRequest: Sendable, Equatable {
    case status
    case setStreams(ActiGraphStreamSettings)
    case epochOpen(ActiGraphEpochRange)
    case epochPage(UInt16)
    case epochAck(UInt16)

    public var opcode: ActiGraphOpcode {
        switch self {
        case .status: .status
        case .setStreams: .setStreams
        case .epochOpen: .epochOpen
        case .epochPage: .epochPage
        case .epochAck: .epochAck
        }
    }

    public func payload() -> [UInt8] {
        switch self {
        case .status: return []
        case .setStreams(let settings): return settings.encoded()
        case .epochOpen(let range): return range.encoded()
        case .epochPage(let page), .epochAck(let page):
            var writer = ByteWriter()
            writer.write(page)
            return writer.bytes
        }
    }

    public func frame(sequence: UInt8) -> VendorFrame {
        VendorFrame(opcode: opcode.rawValue, sequence: sequence, payload: payload())
    }

    /// What the Link reads. An unknown opcode is `unknownIdentifier`; a payload of the wrong length is
    /// `truncated` with the length the opcode takes.
    public init(frame: VendorFrame) throws(GATTCodecError) {
        guard let opcode = ActiGraphOpcode(rawValue: frame.opcode) else {
            throw .unknownIdentifier(field: "opcode", value: Int(frame.opcode))
        }
        var reader = ByteReader(frame.payload)
        switch opcode {
        case .status: self = .status
        case .setStreams: self = .setStreams(try ActiGraphStreamSettings(reading: &reader))
        case .epochOpen: self = .epochOpen(try ActiGraphEpochRange(reading: &reader))
        case .epochPage: self = .epochPage(try reader.read(UInt16.self))
        case .epochAck: self = .epochAck(try reader.read(UInt16.self))
        }
        try reader.expectEnd()
    }
}

/// A response frame of the Control Response characteristic: the request's opcode | 0x80, its sequence, the
/// status byte, then the data (present after 0x80 only).
public struct ActiGraphResponse: Sendable, Equatable {
    public var opcode: ActiGraphOpcode
    public var sequence: UInt8
    public var status: ActiGraphStatus
    public var data: [UInt8]

    public init(opcode: ActiGraphOpcode, sequence: UInt8, status: ActiGraphStatus, data: [UInt8] = []) {
        self.opcode = opcode
        self.sequence = sequence
        self.status = status
        self.data = data
    }

    /// A frame without the response bit, of an unknown opcode, or without a status byte is refused.
    public init(frame: VendorFrame) throws(GATTCodecError) {
        guard frame.opcode & 0x80 != 0, let opcode = ActiGraphOpcode(rawValue: frame.opcode & 0x7F) else {
            throw .unknownIdentifier(field: "opcode", value: Int(frame.opcode))
        }
        guard let status = frame.payload.first else { throw .truncated(expected: 1, actual: 0) }
        self.init(opcode: opcode, sequence: frame.sequence, status: ActiGraphStatus(rawValue: status),
                  data: Array(frame.payload.dropFirst()))
    }

    public func frame() -> VendorFrame {
        VendorFrame(opcode: opcode.rawValue | 0x80, sequence: sequence, payload: [status.rawValue] + data)
    }
}
