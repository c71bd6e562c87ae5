#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A tmpfs of a few kilobytes mounted for one test, to fill up and free again: a real `ENOSPC` from the kernel
/// for whatever writes under it. Needs the right to mount (root in the test container); `mount()` says why not
/// otherwise. Unmounted by `unmount()`, which a test calls once the processes using it are stopped.
public struct SmallFileSystem: Sendable {
    public let path: String
    private static let filler = ".filler"

    /// Mounts a tmpfs of `kilobytes` at `path` (created if missing), mode 0700.
    public static func mount(at path: String, kilobytes: Int) async throws -> SmallFileSystem {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let log = try TemporaryDirectory(prefix: "mount")
        defer { log.remove() }
        let child = try ChildProcess(executable: "/bin/mount",
                                     arguments: ["-t", "tmpfs", "-o", "size=\(kilobytes)k,mode=0700", "tmpfs", path],
                                     outputPath: log.file("out"), errorPath: log.file("err"))
        let status = await child.waitForExit(timeout: .seconds(30))
        guard status == 0 else {
            throw TestSetupError("mount -t tmpfs at \(path) failed (\(status.map { "status \($0)" } ?? "no exit")): \(child.errorOutput)")
        }
        return SmallFileSystem(path: path)
    }

    /// Takes every free byte with a filler file; returns how many it took.
    @discardableResult
    public func fill() -> Int {
        let fd = open(path + "/" + Self.filler, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0xA5, count: 4096)
        var taken = 0
        for size in [4096, 512, 64, 1] {
            while true {
                let written = chunk.withUnsafeBytes { write(fd, $0.baseAddress, size) }
                guard written > 0 else { break }
                taken += written
            }
        }
        return taken
    }

    /// Gives the space back.
    public func free() { unlink(path + "/" + Self.filler) }

    /// Unmounts; if something still holds a file there, detaches it lazily (`umount -l`) so no mount is left behind.
    public func unmount() async {
        guard let log = try? TemporaryDirectory(prefix: "umount") else { return }
        defer { log.remove() }
        for arguments in [[path], ["-l", path]] {
            guard let child = try? ChildProcess(executable: "/bin/umount", arguments: arguments,
                                                outputPath: log.file("out"), errorPath: log.file("err")) else { return }
            if await child.waitForExit(timeout: .seconds(30)) == 0 { return }
        }
    }
}
