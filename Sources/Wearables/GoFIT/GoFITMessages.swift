/// A request of the GoFIT vendor service with its payload typed (docs/protocols/gofit.md, "Opcodes").
///
/// The host encodes these; the simulated band decodes them. Ranges the band checks and answers with status 18
/// (a vibration count of 0, a page not yet read) are not the codec's: it only refuses what cannot be framed.
public enum GoFITRequest: Sendable, Equatable {
    case pairStart
    /// `code` is the 4 digits the band shows, `pairingTime` what its `PAIR_START` answered.
    case pairConfirm(code: String, pairingTime: UInt32)
    case authChallenge
    /// `GoFITAuthentication.proof(key:nonce:)`, 16 bytes.
    case authProof([UInt8])
    case identity
    /// No ids reads every setting.
    case settingsRead(ids: [UInt8])
    case settingsWrite([GoFITSettingTLV])
    /// Records with `since ≤ ts ≤ until`, Unix seconds.
    case historyOpen(kind: GoFITHistoryKind, since: UInt32, until: UInt32)
    case historyPage(kind: GoFITHistoryKind, page: UInt16)
    case historyAck(kind: GoFITHistoryKind, page: UInt16)
    case historyStatus
    /// 1–10 on the band.
    case findBand(vibrations: UInt8)
    case clearData
    case initialise

    static let pairingCodeLength = 4
    static let proofLength = 16

    public var opcode: GoFITOpcode {
        switch self {
        case .pairStart: .pairStart
        case .pairConfirm: .pairConfirm
        case .authChallenge: .authChallenge
        case .authProof: .authProof
        case .identity: .identity
        case .settingsRead: .settingsRead
        case .settingsWrite: .settingsWrite
        case .historyOpen: .historyOpen
        case .historyPage: .historyPage
        case .historyAck: .historyAck
        case .historyStatus: .historyStatus
        case .findBand: .findBand
        case .clearData: .clearData
        case .initialise: .initialise
        }
    }

    /// Whether `code` is what `PAIR_CONFIRM` carries: exactly 4 ASCII digits. Check before sending; a request with
    /// another code is still encoded (as its UTF-8) and the band rejects it.
    public static func isPairingCode(_ code: String) -> Bool {
        code.utf8.count == pairingCodeLength && code.utf8.allSatisfy { (0x30...0x39).contains($0) }
    }

    public func payload() -> [UInt8] {
        var writer = ByteWriter()
        switch self {
        case .pairStart, .authChallenge, .identity, .historyStatus, .clearData, .initialise:
            break
        case .pairConfirm(let code, let pairingTime):
            writer.write(contentsOf: code.utf8)
            writer.write(pairingTime)
        case .authProof(let proof):
            writer.write(contentsOf: proof)
        case .settingsRead(let ids):
            writer.write(contentsOf: ids)
        case .settingsWrite(let settings):
            writer.write(contentsOf: GoFITSettingTLV.encode(settings))
        case .historyOpen(let kind, let since, let until):
            writer.write(kind.rawValue)
            writer.write(since)
            writer.write(until)
        case .historyPage(let kind, let page), .historyAck(let kind, let page):
            writer.write(kind.rawValue)
            writer.write(page)
        case .findBand(let vibrations):
            writer.write(vibrations)
        }
        return writer.bytes
    }

    public func frame(sequence: UInt8) -> VendorFrame {
        VendorFrame(opcode: opcode.rawValue, sequence: sequence, payload: payload())
    }

    /// What the band reads. A payload of the wrong length, shorter or longer, is `truncated` with the length the
    /// opcode takes.
    public init(frame: VendorFrame) throws(GATTCodecError) {
        guard let opcode = GoFITOpcode(rawValue: frame.opcode) else {
            throw .unknownIdentifier(field: "opcode", value: Int(frame.opcode))
        }
        let payload = frame.payload
        var reader = ByteReader(payload)
        switch opcode {
        case .pairStart: self = .pairStart
        case .authChallenge: self = .authChallenge
        case .identity: self = .identity
        case .historyStatus: self = .historyStatus
        case .clearData: self = .clearData
        case .initialise: self = .initialise
        case .pairConfirm:
            let digits = try reader.readBytes(Self.pairingCodeLength)
            if let bad = digits.first(where: { !(0x30...0x39).contains($0) }) {
                throw .outOfRange(field: "code", value: Int(bad))
            }
            self = .pairConfirm(code: String(decoding: digits, as: UTF8.self), pairingTime: try reader.read(UInt32.self))
        case .authProof:
            self = .authProof(Array(try reader.readBytes(Self.proofLength)))
        case .settingsRead:
            self = .settingsRead(ids: Array(try reader.readBytes(payload.count)))
        case .settingsWrite:
            self = .settingsWrite(try GoFITSettingTLV.decodeList(Array(try reader.readBytes(payload.count))))
        case .historyOpen:
            self = .historyOpen(kind: try reader.readHistoryKind(), since: try reader.read(UInt32.self),
                                until: try reader.read(UInt32.self))
        case .historyPage:
            self = .historyPage(kind: try reader.readHistoryKind(), page: try reader.read(UInt16.self))
        case .historyAck:
            self = .historyAck(kind: try reader.readHistoryKind(), page: try reader.read(UInt16.self))
        case .findBand:
            self = .findBand(vibrations: try reader.readUInt8())
        }
        try reader.expectEnd()
    }
}

/// A response frame: the request's opcode with bit 7 set, its sequence, a status byte, then the opcode's data
/// (only after status 10). `data` stays bytes here; the typed answers below decode it.
public struct GoFITResponse: Sendable, Equatable {
    public var opcode: GoFITOpcode
    public var sequence: UInt8
    public var status: GoFITStatus
    public var data: [UInt8]

    public init(opcode: GoFITOpcode, sequence: UInt8, status: GoFITStatus, data: [UInt8] = []) {
        self.opcode = opcode
        self.sequence = sequence
        self.status = status
        self.data = data
    }

    /// An opcode without bit 7, or one whose low bits name no request (an event's, for one), is
    /// `unknownIdentifier(field: "opcode")`; a payload without its status byte is truncated.
    public init(frame: VendorFrame) throws(GATTCodecError) {
        guard let opcode = GoFITOpcode(responseOpcode: frame.opcode) else {
            throw .unknownIdentifier(field: "opcode", value: Int(frame.opcode))
        }
        guard let status = frame.payload.first else { throw .truncated(expected: 1, actual: 0) }
        self.init(opcode: opcode, sequence: frame.sequence, status: GoFITStatus(rawValue: status),
                  data: Array(frame.payload.dropFirst()))
    }

    public func frame() -> VendorFrame {
        VendorFrame(opcode: opcode.responseOpcode, sequence: sequence, payload: [status.rawValue] + data)
    }
}

/// A frame the band sends unasked; the host does not answer it.
public enum GoFITEvent: Sendable, Equatable {
    /// The wearer asked the band to find the phone.
    case findPhone

    public var opcode: GoFITEventOpcode {
        switch self {
        case .findPhone: .findPhone
        }
    }

    /// An opcode outside the known events is `unknownIdentifier(field: "event opcode")`; `FIND_PHONE` carries no
    /// payload, so bytes in one are `truncated(expected: 0, …)`.
    public init(frame: VendorFrame) throws(GATTCodecError) {
        guard let opcode = GoFITEventOpcode(rawValue: frame.opcode) else {
            throw .unknownIdentifier(field: "event opcode", value: Int(frame.opcode))
        }
        switch opcode {
        case .findPhone:
            guard frame.payload.isEmpty else { throw .truncated(expected: 0, actual: frame.payload.count) }
            self = .findPhone
        }
    }

    /// `sequence` is the band's own counter, independent of the host's.
    public func frame(sequence: UInt8) -> VendorFrame {
        VendorFrame(opcode: opcode.rawValue, sequence: sequence)
    }
}

// MARK: Response data (after status 10)

/// `PAIR_START`: the pairing time u32 the band shows its code for; `PAIR_CONFIRM` sends it back.
public struct GoFITPairingStarted: Sendable, Equatable {
    public var pairingTime: UInt32

    public init(pairingTime: UInt32) { self.pairingTime = pairingTime }

    public init(decoding data: [UInt8]) throws(GATTCodecError) {
        var reader = ByteReader(data)
        pairingTime = try reader.read(UInt32.self)
        try reader.expectEnd()
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(pairingTime)
        return writer.bytes
    }
}

/// `PAIR_CONFIRM`: the 16-byte key the host keeps to authenticate later connections.
public struct GoFITPairingKey: Sendable, Equatable {
    public static let length = 16

    public var key: [UInt8]

    public init(key: [UInt8]) { self.key = key }

    public init(decoding data: [UInt8]) throws(GATTCodecError) {
        var reader = ByteReader(data)
        key = Array(try reader.readBytes(Self.length))
        try reader.expectEnd()
    }

    public func encoded() -> [UInt8] { key }
}

/// `AUTH_CHALLENGE`: 16 random bytes the proof covers.
public struct GoFITChallenge: Sendable, Equatable {
    public static let length = 16

    public var nonce: [UInt8]

    public init(nonce: [UInt8]) { self.nonce = nonce }

    public init(decoding data: [UInt8]) throws(GATTCodecError) {
        var reader = ByteReader(data)
        nonce = Array(try reader.readBytes(Self.length))
        try reader.expectEnd()
    }

    public func encoded() -> [UInt8] { nonce }
}

/// `IDENTITY`: product id u16 and the MAC, most significant byte first as it is printed.
public struct GoFITIdentity: Sendable, Equatable {
    public var productID: UInt16
    /// 6 bytes.
    public var mac: [UInt8]

    public init(productID: UInt16, mac: [UInt8]) {
        self.productID = productID
        self.mac = mac
    }

    /// From `AA:BB:CC:DD:EE:FF` (either case); nil when that is not 6 hex bytes.
    public init?(productID: UInt16, macString: String) {
        let parts = macString.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var mac: [UInt8] = []
        for part in parts {
            guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            mac.append(byte)
        }
        self.init(productID: productID, mac: mac)
    }

    /// `AA:BB:CC:DD:EE:FF`, upper case as BlueZ prints addresses.
    public var macString: String {
        mac.map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return byte < 0x10 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    public init(decoding data: [UInt8]) throws(GATTCodecError) {
        var reader = ByteReader(data)
        productID = try reader.read(UInt16.self)
        mac = Array(try reader.readBytes(6))
        try reader.expectEnd()
    }

    public func encoded() -> [UInt8] {
        precondition(mac.count == 6, "a MAC is 6 bytes")
        var writer = ByteWriter()
        writer.write(productID)
        writer.write(contentsOf: mac)
        return writer.bytes
    }
}

/// `HISTORY_OPEN`: the transfer's kind, how many records it holds and in how many pages.
public struct GoFITHistoryOpened: Sendable, Equatable {
    public var kind: GoFITHistoryKind
    public var recordCount: UInt32
    public var pageCount: UInt16

    public init(kind: GoFITHistoryKind, recordCount: UInt32, pageCount: UInt16) {
        self.kind = kind
        self.recordCount = recordCount
        self.pageCount = pageCount
    }

    public init(decoding data: [UInt8]) throws(GATTCodecError) {
        var reader = ByteReader(data)
        kind = try reader.readHistoryKind()
        recordCount = try reader.read(UInt32.self)
        pageCount = try reader.read(UInt16.self)
        try reader.expectEnd()
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(kind.rawValue)
        writer.write(recordCount)
        writer.write(pageCount)
        return writer.bytes
    }
}

/// `HISTORY_PAGE`: kind u8, page u16, record count u8, then the records — up to 64 fixed-size ones, or one
/// activity with its length prefix.
public struct GoFITHistoryPage: Sendable, Equatable {
    public static let maximumFixedSizeRecords = 64
    public static let maximumActivities = 1

    public var kind: GoFITHistoryKind
    public var page: UInt16
    /// All of `kind`.
    public var records: [GoFITHistoryRecord]

    public init(kind: GoFITHistoryKind, page: UInt16, records: [GoFITHistoryRecord]) {
        self.kind = kind
        self.page = page
        self.records = records
    }

    /// The page's kind frames every record, so a record of another kind shows up as a wrong length; more
    /// records than a page holds is `outOfRange(field: "record count")`; bytes after the last record, or too few
    /// for the count, are `truncated`.
    public init(decoding data: [UInt8]) throws(GATTCodecError) {
        var reader = ByteReader(data)
        kind = try reader.readHistoryKind()
        page = try reader.read(UInt16.self)
        let count = Int(try reader.readUInt8())
        let limit = kind == .activity ? Self.maximumActivities : Self.maximumFixedSizeRecords
        guard count <= limit else { throw .outOfRange(field: "record count", value: count) }
        var records: [GoFITHistoryRecord] = []
        records.reserveCapacity(count)
        for _ in 0..<count { records.append(try GoFITHistoryRecord(reading: &reader, kind: kind)) }
        self.records = records
        try reader.expectEnd()
    }

    /// Traps on a record of another kind than the page's, or more than 255 records: the band's page builder
    /// never makes either.
    public func encoded() -> [UInt8] {
        precondition(records.count <= Int(UInt8.max), "a GoFIT history page holds at most 255 records")
        var writer = ByteWriter()
        writer.write(kind.rawValue)
        writer.write(page)
        writer.write(UInt8(records.count))
        for record in records {
            precondition(record.kind == kind, "a \(record.kind.topicKind) record in a \(kind.topicKind) page")
            record.write(to: &writer)
        }
        return writer.bytes
    }
}

/// `HISTORY_STATUS`: what the band holds of each kind.
public struct GoFITHistoryStatus: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public static let length = 17

        public var kind: GoFITHistoryKind
        public var stored: UInt32
        /// Records not yet acknowledged by `HISTORY_ACK`: what the next sync will bring.
        public var unacknowledged: UInt32
        /// Unix seconds of the oldest and newest record stored.
        public var oldest: UInt32
        public var newest: UInt32

        public init(kind: GoFITHistoryKind, stored: UInt32, unacknowledged: UInt32, oldest: UInt32, newest: UInt32) {
            self.kind = kind
            self.stored = stored
            self.unacknowledged = unacknowledged
            self.oldest = oldest
            self.newest = newest
        }
    }

    public var entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    public func entry(for kind: GoFITHistoryKind) -> Entry? { entries.first { $0.kind == kind } }

    public init(decoding data: [UInt8]) throws(GATTCodecError) {
        var reader = ByteReader(data)
        var entries: [Entry] = []
        while !reader.isAtEnd {
            entries.append(Entry(kind: try reader.readHistoryKind(), stored: try reader.read(UInt32.self),
                                 unacknowledged: try reader.read(UInt32.self), oldest: try reader.read(UInt32.self),
                                 newest: try reader.read(UInt32.self)))
        }
        self.entries = entries
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter()
        for entry in entries {
            writer.write(entry.kind.rawValue)
            writer.write(entry.stored)
            writer.write(entry.unacknowledged)
            writer.write(entry.oldest)
            writer.write(entry.newest)
        }
        return writer.bytes
    }
}
