#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials

/// The on-disk spool behind wear2mqtt's promise that durable messages (fitness and epoch records) survive a
/// broker outage and a gateway restart.
///
/// Every durable message is appended here *before* it is handed to libmosquitto, and forgotten only after
/// the broker acknowledged it. Records live in append-only segment files named after their first sequence
/// number; a small `committed` file holds the highest sequence number below which everything was
/// acknowledged. After a crash the spool replays from there, so delivery is at least once and in order;
/// records carry stable ids for consumers that must deduplicate.
///
/// Not thread-safe: the MQTT loop thread owns it (tests use it from one task). It never waits for the disk there:
/// `makeSyncJob` hands what must reach the disk (copies of the write descriptors, the commit point) to `SpoolSync`'s
/// thread, which fdatasyncs them; `sync()` does the same at once, for shutdown and tests.
final class DurableSpool {
    struct Segment {
        var firstSequence: UInt64
        var lastSequence: UInt64   // firstSequence - 1 while empty
        var size: Int
        var path: String
    }

    let directory: String
    let maximumBytes: Int
    let segmentBytes: Int
    private(set) var segments: [Segment] = []
    /// Everything at or below this sequence number was acknowledged by the broker.
    private(set) var committedSequence: UInt64 = 0
    private(set) var nextSequence: UInt64 = 1
    private var acknowledgedAboveCommit = Set<UInt64>()
    /// Where `nextUnsent()` reads: a segment index and a byte offset in it.
    private var cursor: (segment: Int, offset: Int) = (0, 0)
    private var writeFD: Int32 = -1
    private var readFD: (segment: Int, fd: Int32)?
    private var dirtyData = false
    private var dirtyCommit = false
    /// Write descriptors of segments closed (rotated) with records no sync covered yet: the next job syncs and closes them.
    private var retiredDescriptors: [Int32] = []
    /// A segment file was created since the last sync job: its directory must be synced too.
    private var newSegmentSinceSync = false
    /// Records found torn or corrupt at startup and cut off.
    private(set) var recoveredCorruptions = 0

    /// The sequence number of the last record written (0: none yet).
    var writtenSequence: UInt64 { nextSequence - 1 }
    var totalBytes: Int { segments.reduce(0) { $0 + $1.size } }
    /// Records written but not yet acknowledged.
    var pendingCount: Int { Int(nextSequence - 1 - committedSequence) - acknowledgedAboveCommit.count }
    var hasUnsent: Bool {
        guard cursor.segment < segments.count else { return false }
        return cursor.offset < segments[cursor.segment].size || cursor.segment < segments.count - 1
    }

    /// The mode the spool folder had when it was found open to other users and tightened to 0700 (to warn of).
    private(set) var looseModeTightened: mode_t?

    init(directory: String, maximumBytes: Int, segmentBytes: Int? = nil) throws(MQTTError) {
        self.directory = directory
        self.maximumBytes = max(4096, maximumBytes)
        self.segmentBytes = segmentBytes ?? min(4 << 20, max(4096, maximumBytes / 4))
        do throws(OwnerOnlyDirectoryError) {
            looseModeTightened = try OwnerOnlyDirectory.prepare(directory)
        } catch {
            throw .spoolIO("cannot create \(directory): \(error)")
        }
        try recover()
    }

    deinit {
        if writeFD >= 0 { close(writeFD) }
        if let readFD { close(readFD.fd) }
        for descriptor in retiredDescriptors { close(descriptor) }
    }

    // MARK: Writing

    /// Appends a message and returns its sequence number. Throws `spoolFull` without writing anything when
    /// the record does not fit under the size limit.
    @discardableResult
    func append(_ message: OutgoingMessage, enqueuedAtMilliseconds: UInt64) throws(MQTTError) -> UInt64 {
        let record = SpooledRecord(sequence: nextSequence, enqueuedAtMilliseconds: enqueuedAtMilliseconds,
                                   message: message)
        let bytes = SpoolRecordCodec.encode(record)
        if totalBytes + bytes.count > maximumBytes { reclaim() }
        guard totalBytes + bytes.count <= maximumBytes else { throw .spoolFull(limitBytes: maximumBytes) }
        if segments.isEmpty || segments[segments.count - 1].size + bytes.count > segmentBytes
            && segments[segments.count - 1].size > 0 {
            try startSegment(firstSequence: nextSequence)
        }
        let failure = bytes.withUnsafeBytes { buffer in writeAll(writeFD, buffer) }
        guard failure == 0 else {
            // Cut a partial write so the next append starts on a record boundary.
            _ = ftruncate(writeFD, off_t(segments[segments.count - 1].size))
            throw .spoolIO("write to \(segments[segments.count - 1].path) failed: \(String(cString: strerror(failure)))")
        }
        segments[segments.count - 1].size += bytes.count
        segments[segments.count - 1].lastSequence = record.sequence
        nextSequence += 1
        dirtyData = true
        return record.sequence
    }

    /// Whether a sync has anything to make durable.
    var needsSync: Bool { dirtyData || dirtyCommit || newSegmentSinceSync || !retiredDescriptors.isEmpty }

    /// What the next sync must make durable, taken now (nil: nothing): the loop hands it to the sync thread and goes
    /// on appending; what is written from now on is the next job's. Cheap: a `dup`, no waiting for the disk.
    func makeSyncJob() -> SpoolSyncJob? {
        guard needsSync else { return nil }
        var descriptors = retiredDescriptors
        retiredDescriptors = []
        if dirtyData, writeFD >= 0 {
            let copy = dup(writeFD)
            // Out of descriptors: synced here, on the loop, rather than not at all.
            if copy >= 0 { descriptors.append(copy) } else { fdatasync(writeFD) }
        }
        let job = SpoolSyncJob(covers: writtenSequence, descriptors: descriptors,
                               commit: dirtyCommit ? committedSequence : nil, syncDirectory: newSegmentSinceSync,
                               directory: directory)
        dirtyData = false
        dirtyCommit = false
        newSegmentSinceSync = false
        return job
    }

    /// What a job achieved: a commit point that could not be written is written again by the next one, and after a
    /// failed fdatasync the active segment is synced again (its waiters were told their records are not safe).
    func syncFinished(_ outcome: SpoolSyncOutcome) {
        if !outcome.commitWritten { dirtyCommit = true }
        if outcome.failure != nil {
            if writeFD >= 0 { dirtyData = true }
            if outcome.job.syncDirectory { newSegmentSinceSync = true }
        }
    }

    /// Makes appended records and the commit point durable now, on the caller's thread: at shutdown and in tests.
    func sync() {
        if let job = makeSyncJob() { syncFinished(job.run(sync: { fdatasync($0) })) }
    }

    // MARK: Reading and acknowledging

    /// The next record not yet handed out since this spool was opened, in sequence order.
    func nextUnsent() throws(MQTTError) -> SpooledRecord? {
        while cursor.segment < segments.count {
            let segment = segments[cursor.segment]
            if cursor.offset >= segment.size {
                guard cursor.segment < segments.count - 1 else { return nil }
                cursor = (cursor.segment + 1, 0)
                continue
            }
            let fd = try readDescriptor(for: cursor.segment)
            let header = try readBytes(fd, offset: cursor.offset, count: SpoolRecordCodec.headerSize)
            let bodyLength: Int
            do { bodyLength = try SpoolRecordCodec.bodyLength(header: header[...]) } catch {
                throw .spoolIO("unreadable record header in \(segment.path)")
            }
            let bytes = try readBytes(fd, offset: cursor.offset, count: SpoolRecordCodec.headerSize + bodyLength)
            cursor.offset += bytes.count
            do {
                let record = try SpoolRecordCodec.decode(bytes[...])
                if record.sequence <= committedSequence { continue }
                return record
            } catch {
                throw .spoolIO("corrupt record in \(segment.path) at offset \(cursor.offset - bytes.count)")
            }
        }
        return nil
    }

    /// The broker has the record (or it was dropped as undeliverable): it will not be replayed again.
    func acknowledge(_ sequence: UInt64) {
        guard sequence > committedSequence else { return }
        acknowledgedAboveCommit.insert(sequence)
        while acknowledgedAboveCommit.remove(committedSequence + 1) != nil {
            committedSequence += 1
            dirtyCommit = true
        }
        reclaim()
    }

    // MARK: Recovery and reclaiming

    private var commitPath: String { SpoolSyncJob.commitPath(in: directory) }

    private func recover() throws(MQTTError) {
        if let data = readWholeFile(atPath: commitPath), data.count == 8 {
            committedSequence = data.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let firstSequences = names.compactMap { name -> UInt64? in
            guard name.hasSuffix(".seg") else { return nil }
            return UInt64(name.dropLast(4))
        }.sorted()
        var foundCursor = false
        for first in firstSequences {
            let path = segmentPath(first)
            guard let bytes = readWholeFile(atPath: path) else {
                throw .spoolIO("cannot read \(path)")
            }
            var offset = 0
            var last = first - 1
            while offset < bytes.count {
                guard let record = SpoolRecordCodec.wholeRecord(in: bytes, at: offset) else {
                    // A torn or corrupt tail: a crash hit the middle of a write. Keep what is whole.
                    recoveredCorruptions += 1
                    truncate(path, off_t(offset))
                    break
                }
                if !foundCursor && record.value.sequence > committedSequence {
                    cursor = (segments.count, offset)
                    foundCursor = true
                }
                last = record.value.sequence
                offset += record.size
            }
            segments.append(Segment(firstSequence: first, lastSequence: last, size: offset, path: path))
            nextSequence = max(nextSequence, last + 1)
        }
        nextSequence = max(nextSequence, committedSequence + 1)
        if !foundCursor { cursor = (segments.count, 0) }
        reclaim()
        if let last = segments.last {
            writeFD = open(last.path, O_WRONLY | O_APPEND | O_CLOEXEC)
            guard writeFD >= 0 else { throw .spoolIO("cannot open \(last.path): \(String(cString: strerror(errno)))") }
        }
        if !foundCursor { cursor = (max(0, segments.count - 1), segments.last?.size ?? 0) }
    }

    /// Deletes segments whose every record was acknowledged. When the whole spool is acknowledged and the
    /// active segment has grown past a segment's size, it starts over with a fresh file.
    private func reclaim() {
        var removed = 0
        while segments.count > 1, segments[0].lastSequence <= committedSequence, cursor.segment > 0 {
            closeReadDescriptor(ifSegment: 0)
            unlink(segments[0].path)
            segments.removeFirst()
            removed += 1
            cursor.segment -= 1
        }
        if removed > 0, let readFD { self.readFD = (readFD.segment - removed, readFD.fd) }
        if let last = segments.last, segments.count == 1, last.lastSequence <= committedSequence,
           last.size >= segmentBytes, !hasUnsent {
            closeReadDescriptor(ifSegment: 0)
            if writeFD >= 0 { close(writeFD); writeFD = -1 }
            unlink(last.path)
            segments.removeAll()
            cursor = (0, 0)
        }
    }

    private func startSegment(firstSequence: UInt64) throws(MQTTError) {
        if writeFD >= 0 {
            // Its records reach the disk with the next sync job, on the sync thread.
            if dirtyData { retiredDescriptors.append(writeFD) } else { close(writeFD) }
            writeFD = -1
            dirtyData = false
        }
        let path = segmentPath(firstSequence)
        writeFD = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard writeFD >= 0 else { throw .spoolIO("cannot create \(path): \(String(cString: strerror(errno)))") }
        fchmod(writeFD, 0o600)  // a segment left behind with a looser mode is made private too
        newSegmentSinceSync = true
        segments.append(Segment(firstSequence: firstSequence, lastSequence: firstSequence - 1, size: 0, path: path))
        if cursor.segment >= segments.count { cursor = (segments.count - 1, 0) }
    }

    private func segmentPath(_ first: UInt64) -> String {
        let digits = String(first)
        return directory + "/" + String(repeating: "0", count: max(0, 20 - digits.count)) + digits + ".seg"
    }

    // MARK: File descriptors

    private func readDescriptor(for segment: Int) throws(MQTTError) -> Int32 {
        if let readFD, readFD.segment == segment { return readFD.fd }
        if let readFD { close(readFD.fd) }
        let fd = open(segments[segment].path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .spoolIO("cannot open \(segments[segment].path)") }
        readFD = (segment, fd)
        return fd
    }

    private func closeReadDescriptor(ifSegment segment: Int) {
        if let readFD, readFD.segment == segment {
            close(readFD.fd)
            self.readFD = nil
        }
    }

    private func readBytes(_ fd: Int32, offset: Int, count: Int) throws(MQTTError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
        guard got == count else { throw .spoolIO("short read in spool at offset \(offset)") }
        return bytes
    }
}
