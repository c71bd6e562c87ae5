import Wearables

/// The Link side of the ActiGraph vendor service (docs/protocols/actigraph.md, "Vendor service" and "Simulated
/// Link") as a pure state machine: segments written to Control go in with the Link's clock, the segments to notify
/// on Control Response come out. No I/O and no clock; the simulated Link (`SimulatedActiGraphLink`) feeds it,
/// delivers what it answers and runs the streams it switches on.
///
/// What it keeps and the rules it follows:
/// - **Frames and retransmission** are `FramedResponder`'s: malformed frames dropped unanswered and counted, a
///   repeated opcode and sequence answered again from the cache without executing twice.
/// - **STATUS** answers the battery, whether the newest epoch was worn, the streams in force, the first and last
///   epoch held, how many, and `now` as the device time.
/// - **SET_STREAMS** with a raw rate outside 30…100 Hz, an IMU mask with bits above bit 3 or a raw-streaming byte
///   other than 0/1 is 0x8B (SDK 11, "The Last Configuration Request Received Failed") and changes nothing;
///   otherwise the settings apply and are echoed.
/// - **EPOCH_OPEN** with start after stop is 0x88 (SDK 8, "Date Format Error") and leaves any open download as it
///   was; otherwise it replaces the open download and answers its epoch count and page count (pages of up to 60).
///   A range the Link holds nothing of is an empty download (0 epochs, 0 pages), not an error.
/// - **EPOCH_PAGE** outside the open download, or with none open, is 0x87 (SDK 7, "Epoch Download Error"); a page
///   can be read again. `failingPage` answers 0x86 (SDK 6, "Wireless Transfer Error") once, for a storage read
///   that failed; the host reads it again.
/// - **EPOCH_ACK** must name the lowest page not yet acknowledged of the open download, else 0x87. It deletes
///   nothing: the Link keeps its epochs, and the host's cursor (the newest epoch it published) keeps a later
///   download from repeating them.
/// - **Malformed payloads** answer the opcode's own error: SET_STREAMS 0x8B, EPOCH_OPEN 0x88, EPOCH_PAGE and
///   EPOCH_ACK 0x87; STATUS, which has none of its own, and an **unknown opcode** answer 0x83 (SDK 3,
///   "Unrecognized Configuration").
///
/// Does not: record new epochs, drain the battery (the peripheral sets `batteryPercent`), or produce stream data
/// (`ActiGraphLinkStreams` does, from `streams`).
public struct ActiGraphLinkEngine: Sendable, FramedDeviceEngine {
    /// 0x83: an unknown opcode, or a STATUS request with a payload.
    public static let unrecognizedConfiguration = ActiGraphStatus(sdkCode: 3)
    /// 0x86: the page `failingPage` could not be read from storage.
    public static let wirelessTransferError = ActiGraphStatus(sdkCode: 6)
    /// 0x87: a page or acknowledgement outside the open download.
    public static let epochDownloadError = ActiGraphStatus(sdkCode: 7)
    /// 0x88: an epoch range with start after stop.
    public static let dateFormatError = ActiGraphStatus(sdkCode: 8)
    /// 0x8B: stream settings the Link cannot run.
    public static let configurationFailed = ActiGraphStatus(sdkCode: 11)

    /// Things tests and the simulator's `Inspect` read.
    public struct Counters: Sendable, Equatable {
        public internal(set) var streamChanges = 0
        public internal(set) var downloadsOpened = 0
        public internal(set) var epochPagesServed = 0
        public internal(set) var epochAcks = 0
        public internal(set) var pageFailures = 0
    }

    /// Reassembly, the retransmission cache and segmenting, with their counters.
    public internal(set) var frames = FramedResponder()
    /// The streams in force; off on every new connection.
    public private(set) var streams = ActiGraphStreamSettings.off
    /// What STATUS reports; the peripheral keeps it up to date as its battery drains.
    public var batteryPercent: UInt8
    /// The page whose next `EPOCH_PAGE` fails with 0x86; nil once it has.
    public private(set) var failingPage: UInt16?
    public private(set) var counters = Counters()
    private(set) var epochs: ActiGraphEpochStore

    public init(epochs: [ActiGraphEpochRecord], batteryPercent: UInt8 = 100, failingPage: UInt16? = nil) {
        self.epochs = ActiGraphEpochStore(epochs)
        self.batteryPercent = min(batteryPercent, 100)
        self.failingPage = failingPage
    }

    /// Epochs held (acknowledged ones included: the Link deletes none).
    public var epochCount: Int { epochs.records.count }

    /// Whether the newest epoch was worn.
    public var isWorn: Bool { epochs.isWorn }

    public var isDownloadOpen: Bool { epochs.download != nil }

    /// What STATUS answers at `now`.
    public func status(now: UInt32) -> ActiGraphDeviceStatus {
        ActiGraphDeviceStatus(batteryPercent: batteryPercent, isWorn: epochs.isWorn, streams: streams,
                              firstEpoch: epochs.records.first?.timestamp ?? 0,
                              lastEpoch: epochs.records.last?.timestamp ?? 0,
                              epochCount: UInt32(clamping: epochs.records.count), deviceTime: now)
    }

    // MARK: Connection

    /// The link went: the streams stop (a new connection starts with them off), the open download, the cached
    /// response and any half-received frame go. The epochs, the battery and a pending `failingPage` stay.
    public mutating func connectionEnded() {
        frames.connectionEnded()
        epochs.closeDownload()
        streams = .off
    }

    // MARK: Requests

    mutating func execute(_ frame: VendorFrame, now: UInt32) -> VendorFrame {
        guard let opcode = ActiGraphOpcode(rawValue: frame.opcode) else {
            return VendorFrame(opcode: frame.opcode | 0x80, sequence: frame.sequence,
                               payload: [Self.unrecognizedConfiguration.rawValue])
        }
        let (status, data) = answer(opcode, frame, now: now)
        return ActiGraphResponse(opcode: opcode, sequence: frame.sequence, status: status,
                                 data: status.isOK ? data : []).frame()
    }

    private mutating func answer(_ opcode: ActiGraphOpcode, _ frame: VendorFrame, now: UInt32)
        -> (ActiGraphStatus, [UInt8])
    {
        let request: ActiGraphRequest
        do {
            request = try ActiGraphRequest(frame: frame)
        } catch {
            return (Self.status(forMalformed: opcode), [])
        }
        switch request {
        case .status:
            return (.ok, status(now: now).encoded())
        case .setStreams(let settings):
            streams = settings
            counters.streamChanges += 1
            return (.ok, settings.encoded())
        case .epochOpen(let range):
            guard let opened = epochs.open(range) else { return (Self.dateFormatError, []) }
            counters.downloadsOpened += 1
            return (.ok, opened.encoded())
        case .epochPage(let number):
            guard let page = epochs.page(number) else { return (Self.epochDownloadError, []) }
            if failingPage == number {
                failingPage = nil
                counters.pageFailures += 1
                return (Self.wirelessTransferError, [])
            }
            counters.epochPagesServed += 1
            return (.ok, page.encoded())
        case .epochAck(let number):
            guard epochs.acknowledge(number) else { return (Self.epochDownloadError, []) }
            counters.epochAcks += 1
            return (.ok, [])
        }
    }

    /// A payload the codec refuses (wrong length, a rate or mask out of range) answers the opcode's own error.
    static func status(forMalformed opcode: ActiGraphOpcode) -> ActiGraphStatus {
        switch opcode {
        case .status: unrecognizedConfiguration
        case .setStreams: configurationFailed
        case .epochOpen: dateFormatError
        case .epochPage, .epochAck: epochDownloadError
        }
    }
}
