import Wearables

/// What a GoFIT band keeps of its fitness history and the one transfer a host may have open on it
/// (docs/protocols/gofit.md, "History transfer"). Pure: the band engine drives it.
///
/// - `open` fixes the records of one kind with `since ≤ ts ≤ until` and splits them into pages of up to 64
///   fixed-size records or one activity; it replaces any transfer already open. `since > until` is an empty
///   transfer (no pages) rather than an error, so a host whose cursor has passed its upper bound simply gets
///   nothing.
/// - Pages can be read in any order and again; they are acknowledged in order, and only once read: the next
///   acknowledgement must name the lowest page not yet acknowledged, which must have been read.
/// - An acknowledgement marks the page's records delivered; `HISTORY_STATUS` counts the rest as unacknowledged.
///
/// Not modeled: recording new records while the simulation runs, and so the band overwriting delivered records
/// when its storage is full.
struct GoFITBandHistoryStore: Sendable, Equatable {
    struct Transfer: Sendable, Equatable {
        let kind: GoFITHistoryKind
        let pages: [[GoFITHistoryRecord]]
        var read: Set<UInt16> = []
        /// Pages 0..<acknowledged are acknowledged.
        var acknowledged: UInt16 = 0

        var recordCount: Int { pages.reduce(0) { $0 + $1.count } }
    }

    /// Each kind oldest first.
    private(set) var records: [GoFITHistoryKind: [GoFITHistoryRecord]] = [:]
    /// The times of the records acknowledged, per kind (a time is unique within a kind).
    private var delivered: [GoFITHistoryKind: Set<UInt32>] = [:]
    private(set) var transfer: Transfer?

    init(_ records: [GoFITHistoryRecord] = []) {
        for record in records { self.records[record.kind, default: []].append(record) }
        for kind in self.records.keys { self.records[kind]?.sort { $0.timestamp < $1.timestamp } }
    }

    var count: Int { records.values.reduce(0) { $0 + $1.count } }

    func unacknowledgedCount(of kind: GoFITHistoryKind) -> Int {
        let all = records[kind] ?? []
        let done = delivered[kind] ?? []
        return all.filter { !done.contains($0.timestamp) }.count
    }

    var unacknowledgedCount: Int { GoFITHistoryKind.allCases.reduce(0) { $0 + unacknowledgedCount(of: $1) } }

    /// `HISTORY_OPEN`.
    mutating func open(_ kind: GoFITHistoryKind, since: UInt32, until: UInt32) -> GoFITHistoryOpened {
        let selected = since <= until ? (records[kind] ?? []).filter { (since...until).contains($0.timestamp) } : []
        let perPage = kind == .activity ? GoFITHistoryPage.maximumActivities : GoFITHistoryPage.maximumFixedSizeRecords
        // UInt16 pages of 64 records hold 4 million records, far beyond a band's storage.
        let pages = stride(from: 0, to: selected.count, by: perPage).prefix(Int(UInt16.max)).map {
            Array(selected[$0..<min($0 + perPage, selected.count)])
        }
        let opened = Transfer(kind: kind, pages: pages)
        transfer = opened
        return GoFITHistoryOpened(kind: kind, recordCount: UInt32(opened.recordCount), pageCount: UInt16(pages.count))
    }

    /// `HISTORY_PAGE`; nil when no transfer of `kind` is open or it has no such page (status 18).
    mutating func page(_ kind: GoFITHistoryKind, _ number: UInt16) -> GoFITHistoryPage? {
        guard var current = transfer, current.kind == kind, Int(number) < current.pages.count else { return nil }
        current.read.insert(number)
        transfer = current
        return GoFITHistoryPage(kind: kind, page: number, records: current.pages[Int(number)])
    }

    /// `HISTORY_ACK`; false for a page not read, out of order, or of no open transfer (status 18).
    mutating func acknowledge(_ kind: GoFITHistoryKind, _ number: UInt16) -> Bool {
        guard var current = transfer, current.kind == kind, number == current.acknowledged,
              current.read.contains(number), Int(number) < current.pages.count else { return false }
        current.acknowledged += 1
        transfer = current
        delivered[kind, default: []].formUnion(current.pages[Int(number)].map(\.timestamp))
        return true
    }

    /// `HISTORY_STATUS`: every kind, 0 for the times of an empty one.
    var status: GoFITHistoryStatus {
        GoFITHistoryStatus(entries: GoFITHistoryKind.allCases.map { kind in
            let all = records[kind] ?? []
            return GoFITHistoryStatus.Entry(kind: kind, stored: UInt32(all.count),
                                            unacknowledged: UInt32(unacknowledgedCount(of: kind)),
                                            oldest: all.first?.timestamp ?? 0, newest: all.last?.timestamp ?? 0)
        })
    }

    /// The link dropped: the transfer is gone, what was acknowledged stays delivered.
    mutating func closeTransfer() { transfer = nil }

    /// `CLEAR_DATA` and `INITIALISE`.
    mutating func erase() {
        records = [:]
        delivered = [:]
        transfer = nil
    }
}
