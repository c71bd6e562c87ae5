#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SystemCrypto
import FoundationEssentials
import Wearables

/// What the gateway checks before a firmware update sends anything: `request/dfu` names a file under the
/// configured `dfu.dir` and its SHA-256, and only a regular file that is inside that directory, within the size
/// limit and exactly the file the requester meant is read as a package.
///
/// The checks are ordered cheapest and least revealing first: the name alone, then the path resolved through
/// symlinks, then the kind of file and its size, and only then its bytes. What an answer may tell: a name that
/// does not resolve to a path inside the directory (missing, or a symlink leading out) is "no such file" either
/// way; only for a path inside the directory does it say that it is not a regular file, too large or unreadable;
/// a wrong digest is "does not match", never the real one.
///
/// It never blocks on the kind of file: a FIFO, socket or device is refused from `stat` and opened (if swapped in
/// meanwhile) with `O_NONBLOCK`, then refused from `fstat`. A regular file on a slow or hung file system can still
/// block, so callers run it off the data path with a time limit (the gateway's `FileAccessOffLoop`). It reads the
/// file and nothing else; it does not cache, watch or write.
public enum DFUPackageFile {
    public static func load(
        name: String, directory: String, expectedSHA256 hex: String, maximumSize: Int
    ) throws(DFUPackageError) -> DFUPackage {
        let expected = try normalizedDigest(hex)
        let bytes = try contents(name: name, directory: directory, maximumSize: maximumSize)
        guard sha256(of: bytes) == expected else { throw .checksumMismatch(expected: expected) }
        return try DFUPackage(data: bytes, maximumSize: maximumSize)
    }

    /// The bytes of the regular file `name` names inside `directory`, with every check of `load` but the digest.
    public static func contents(name: String, directory: String, maximumSize: Int) throws(DFUPackageError) -> [UInt8] {
        try readRegularFile(try confinedPath(name: name, directory: directory), name: name, maximumSize: maximumSize)
    }

    /// The SHA-256 of `bytes` as `request/dfu` expects it: 64 lower-case hex digits (what `sha256sum` prints).
    public static func sha256(of bytes: [UInt8]) -> String { DFUHex.string(Digest.sha256(bytes)) }

    /// The 64 hex digits of a SHA-256 in lowercase; upper case is accepted because tools print both.
    static func normalizedDigest(_ hex: String) throws(DFUPackageError) -> String {
        let lower = hex.lowercased()
        guard lower.utf8.count == 64, lower.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { throw .invalidChecksum(hex) }
        return lower
    }

    /// The real path of `name` under `directory`, refusing names that could leave it: absolute names and `..`
    /// are refused by their text, and a symlink that leads out after resolution reads as a missing file.
    /// Symlinks that stay inside the directory are followed (`latest.zip -> band-2.2.0.zip` is a common layout).
    static func confinedPath(name: String, directory: String) throws(DFUPackageError) -> String {
        guard !name.isEmpty else { throw .invalidFileName(name: name, reason: "it is empty") }
        guard !name.hasPrefix("/") else {
            throw .invalidFileName(name: name, reason: "absolute paths are not allowed, name a file under the DFU directory")
        }
        guard !name.utf8.contains(0) else { throw .invalidFileName(name: name, reason: "it contains a NUL byte") }
        guard !name.split(separator: "/", omittingEmptySubsequences: false).contains("..") else {
            throw .invalidFileName(name: name, reason: "\"..\" components are not allowed")
        }
        guard let root = realPath(directory) else { throw .directoryNotFound(directory) }
        let candidate = root.hasSuffix("/") ? root + name : root + "/" + name
        // Any failure to resolve (missing, a dangling or looping link, a component that is not a directory or not
        // searchable) is "no such file": the reason could describe a path outside the directory.
        guard let resolved = realPath(candidate) else { throw .fileNotFound(name) }
        let prefix = root.hasSuffix("/") ? root : root + "/"
        guard resolved.hasPrefix(prefix) else { throw .fileNotFound(name) }
        return resolved
    }

    /// Reads the regular file at `path` (already resolved) of at most `maximumSize` bytes. Anything else is
    /// refused before it is opened; the descriptor is checked again in case the file was swapped meanwhile, and
    /// the read stops one byte past the limit in case the file grew.
    static func readRegularFile(_ path: String, name: String, maximumSize: Int) throws(DFUPackageError) -> [UInt8] {
        var named = stat()
        guard lstat(path, &named) == 0 else { throw .fileNotFound(name) }
        guard (named.st_mode & S_IFMT) == S_IFREG else { throw .unreadable(name: name, reason: "it is not a regular file") }
        guard Int(named.st_size) <= maximumSize else { throw .tooLarge(bytes: Int(named.st_size), limit: maximumSize) }

        // O_NONBLOCK: a FIFO swapped in since the lstat opens at once instead of waiting for a writer.
        // O_NOFOLLOW: the path was resolved a moment ago; a symlink swapped in since is refused, not followed.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else {
            if errno == ENOENT || errno == ELOOP { throw .fileNotFound(name) }
            throw .unreadable(name: name, reason: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        var opened = stat()
        guard fstat(descriptor, &opened) == 0 else {
            throw .unreadable(name: name, reason: String(cString: strerror(errno)))
        }
        guard (opened.st_mode & S_IFMT) == S_IFREG, opened.st_dev == named.st_dev, opened.st_ino == named.st_ino else {
            throw .unreadable(name: name, reason: "it is not a regular file")
        }
        guard Int(opened.st_size) <= maximumSize else { throw .tooLarge(bytes: Int(opened.st_size), limit: maximumSize) }

        var bytes = [UInt8](repeating: 0, count: Int(opened.st_size) + 1)
        var count = 0
        while true {
            if count == bytes.count {
                guard bytes.count <= maximumSize else { break }
                bytes += repeatElement(0, count: min(1 << 16, maximumSize + 1 - bytes.count))
            }
            let result = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if result < 0, errno == EINTR { continue }
            guard result >= 0 else { throw .unreadable(name: name, reason: String(cString: strerror(errno))) }
            if result == 0 { break }
            count += result
        }
        guard count <= maximumSize else { throw .tooLarge(bytes: count, limit: maximumSize) }
        bytes.removeSubrange(count...)
        return bytes
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
