#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials
import MQTT

/// Writes a whole file so that a crash leaves the old content or the new, never half of either: a temporary
/// file beside it, fsync, rename. The file is readable and writable by its owner only whatever the umask: created
/// 0600, and set to 0600 on the descriptor in case a temporary file with another mode was left behind. A symlink
/// in the temporary file's place is refused, not followed.
enum AtomicFile {
    static func replace(_ path: String, with data: Data) throws {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw FileWriteError(code: errno) }
        guard fchmod(fd, 0o600) == 0 else {
            let code = errno
            close(fd)
            throw FileWriteError(code: code)
        }
        // The first failure's errno is what the caller reports: ENOSPC on a full disk, not a vague EIO.
        var failure = data.withUnsafeBytes { writeAll(fd, $0) }
        if failure == 0, fsync(fd) != 0 { failure = errno }
        close(fd)
        if failure == 0, rename(temporary, path) != 0 { failure = errno }
        guard failure == 0 else {
            unlink(temporary)
            throw FileWriteError(code: failure)
        }
    }
}

/// A state file that could not be written, in the system's words ("No space left on device"); no path, so an
/// answer quoting it tells a requester nothing of the gateway's folders (the log names the path).
struct FileWriteError: Error, CustomStringConvertible {
    let code: Int32

    var description: String { String(cString: strerror(code)) }
}
