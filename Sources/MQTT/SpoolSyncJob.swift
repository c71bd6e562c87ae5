#if canImport(Glibc)
import Glibc
#endif

/// One pass of making the durable spool's files durable, made on the loop (`DurableSpool.makeSyncJob`) and run on the
/// spool's sync thread. It owns its descriptors — copies of the active segment's write descriptor and the write
/// descriptors of segments closed since the last pass — and closes them, so the loop may append, rotate, close and
/// unlink segments while it runs: a descriptor keeps its file's data reachable for fdatasync even after an unlink.
struct SpoolSyncJob: Sendable {
    /// Every record up to this sequence number was written to one of `descriptors` before the job was made.
    let covers: UInt64
    let descriptors: [Int32]
    /// The commit point to write, nil when it did not change. Not fdatasynced: a commit point lost to a power cut only
    /// replays acknowledged records (at least once, as documented), it never loses one.
    let commit: UInt64?
    /// A segment file was created since the last pass: its directory entry must reach the disk with its records.
    let syncDirectory: Bool
    let directory: String

    static func commitPath(in directory: String) -> String { directory + "/committed" }

    /// Runs on the sync thread. `sync` is `fdatasync` (tests and the slow-card test inject a slower one).
    func run(sync: (Int32) -> Int32) -> SpoolSyncOutcome {
        var failure: String?
        for descriptor in descriptors {
            if sync(descriptor) != 0, failure == nil { failure = "fdatasync: \(String(cString: strerror(errno)))" }
            close(descriptor)
        }
        if syncDirectory {
            let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if descriptor < 0 || sync(descriptor) != 0, failure == nil {
                failure = "sync of \(directory): \(String(cString: strerror(errno)))"
            }
            if descriptor >= 0 { close(descriptor) }
        }
        let commitWritten = commit.map { Self.writeCommit($0, in: directory) } ?? true
        return SpoolSyncOutcome(job: self, failure: failure, commitWritten: commitWritten)
    }

    /// Writes the commit point beside the segments: a temporary file renamed over the old one, so a crash leaves one
    /// or the other whole.
    static func writeCommit(_ sequence: UInt64, in directory: String) -> Bool {
        var value = sequence.littleEndian
        let path = commitPath(in: directory)
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return false }
        fchmod(fd, 0o600)
        let ok = withUnsafeBytes(of: &value) { writeAll(fd, $0) } == 0
        close(fd)
        return ok && rename(temporary, path) == 0
    }
}

/// What a `SpoolSyncJob` achieved, handed back to the loop.
struct SpoolSyncOutcome: Sendable {
    let job: SpoolSyncJob
    /// Why the records the job covers may not be on disk; nil when every fdatasync returned 0.
    let failure: String?
    /// False when the commit point could not be written (it is written again by the next pass).
    let commitWritten: Bool
}
