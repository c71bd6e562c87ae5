#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Writes a whole file so that a crash leaves the old content or the new, never half of either: a temporary
/// file beside it, fsync, rename. The file is readable and writable by its owner only whatever the umask: created
/// 0600, and set to 0600 on the descriptor in case a temporary file with another mode was left behind. A symlink
/// in the temporary file's place is refused, not followed.
enum AtomicFile {
    static func replace(_ path: String, with data: Data) throws {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        guard fchmod(fd, 0o600) == 0 else {
            let code = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == data.count, synced, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw POSIXError(.EIO)
        }
    }
}
