#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes all of `buffer` to `fd`: 0, or the errno of the write that failed. A short write is retried, so a disk
/// that fills up midway reports ENOSPC; the errno is returned, not left in `errno`, so cleaning up after a
/// failure (a truncate, a close) cannot overwrite it. Shared by the spool and the gateway's atomic files.
package func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Int32 {
    var done = 0
    while done < buffer.count {
        let result = write(fd, buffer.baseAddress! + done, buffer.count - done)
        if result < 0 {
            if errno == EINTR { continue }
            return errno
        }
        done += result
    }
    return 0
}
