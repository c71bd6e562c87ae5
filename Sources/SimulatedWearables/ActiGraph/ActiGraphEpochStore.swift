import Wearables

/// What a Link keeps of its epochs and the one download a host may have open on it (docs/protocols/actigraph.md,
/// "Vendor service"). Pure: `ActiGraphLinkEngine` drives it.
///
/// - `open` fixes the epochs with `start ≤ ts ≤ stop` and cuts them into pages of up to 60; it replaces any
///   download already open. `start > stop` is refused (nil) and leaves the open download as it was.
/// - Pages can be read in any order and again; they are acknowledged in order (the next acknowledgement names the
///   lowest page not yet acknowledged).
/// - An acknowledgement deletes nothing: the Link keeps its epochs, and the host's cursor (the newest epoch it
///   published) is what keeps a later download from repeating them. Acknowledgements are counted, for tests.
///
/// Not modeled: recording new epochs while the simulation runs, storage filling up.
struct ActiGraphEpochStore: Sendable, Equatable {
    struct Download: Sendable, Equatable {
        let range: ActiGraphEpochRange
        let pages: [[ActiGraphEpochRecord]]
        /// Pages 0..<acknowledged are acknowledged.
        var acknowledged: UInt16 = 0

        var epochCount: Int { pages.reduce(0) { $0 + $1.count } }
    }

    /// Oldest first.
    let records: [ActiGraphEpochRecord]
    private(set) var download: Download?

    init(_ records: [ActiGraphEpochRecord]) {
        self.records = records.sorted { $0.timestamp < $1.timestamp }
    }

    /// Whether the newest epoch was worn: what STATUS reports as the Link's wear (false without epochs).
    var isWorn: Bool { records.last?.isWorn ?? false }

    /// `EPOCH_OPEN`; nil when `start > stop` (status 0x88).
    mutating func open(_ range: ActiGraphEpochRange) -> ActiGraphEpochOpened? {
        guard range.start <= range.stop else { return nil }
        let selected = records.filter { (range.start...range.stop).contains($0.timestamp) }
        let perPage = ActiGraphEpochPage.maximumRecords
        // u16 pages of 60 epochs hold 7 years of minutes, far beyond the `epoch_hours` a simulated Link holds.
        let pages = stride(from: 0, to: selected.count, by: perPage).prefix(Int(UInt16.max)).map {
            Array(selected[$0..<min($0 + perPage, selected.count)])
        }
        let opened = Download(range: range, pages: pages)
        download = opened
        return ActiGraphEpochOpened(epochCount: UInt32(opened.epochCount), pageCount: UInt16(pages.count))
    }

    /// `EPOCH_PAGE`; nil without an open download or for a page it does not have (status 0x87).
    func page(_ number: UInt16) -> ActiGraphEpochPage? {
        guard let download, Int(number) < download.pages.count else { return nil }
        return ActiGraphEpochPage(page: number, records: download.pages[Int(number)])
    }

    /// `EPOCH_ACK`; false out of order, for a page the download does not have, or without one (status 0x87).
    mutating func acknowledge(_ number: UInt16) -> Bool {
        guard var current = download, number == current.acknowledged, Int(number) < current.pages.count else {
            return false
        }
        current.acknowledged += 1
        download = current
        return true
    }

    /// The link dropped: the download goes, the epochs stay.
    mutating func closeDownload() { download = nil }
}
