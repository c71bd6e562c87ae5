#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import Foundation
import Wearables

/// What the gateway checks before a firmware update sends anything: `request/dfu` names a file under the
/// configured `dfu.dir` and its SHA-256, and only a file that is inside that directory, within the size limit
/// and exactly the file the requester meant is read as a package.
///
/// The checks are ordered cheapest and least revealing first: the name alone, then the path resolved through
/// symlinks, then the file's size, and only then its bytes. It reads the file and nothing else; it does not
/// cache, watch or write.
public enum DFUPackageFile {
    public static func load(
        name: String, directory: String, expectedSHA256 hex: String, maximumSize: Int
    ) throws(DFUPackageError) -> DFUPackage {
        let expected = try normalizedDigest(hex)
        let path = try confinedPath(name: name, directory: directory)
        let bytes = try read(path, name: name, maximumSize: maximumSize)
        let actual = sha256(of: bytes)
        guard actual == expected else { throw .checksumMismatch(expected: expected, actual: actual) }
        return try DFUPackage(data: bytes, maximumSize: maximumSize)
    }

    /// The 64 hex digits of a SHA-256 in lowercase; upper case is accepted because tools print both.
    /// The SHA-256 of `bytes` as `request/dfu` expects it: 64 lower-case hex digits (what `sha256sum` prints).
    public static func sha256(of bytes: [UInt8]) -> String { DFUHex.string(SHA256.hash(data: bytes)) }

    static func normalizedDigest(_ hex: String) throws(DFUPackageError) -> String {
        let lower = hex.lowercased()
        guard lower.utf8.count == 64, lower.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { throw .invalidChecksum(hex) }
        return lower
    }

    /// The real path of `name` under `directory`, refusing names that could leave it: absolute names and `..`
    /// are refused by their text, and a symlink that leads out is refused after resolution.
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
        guard let resolved = realPath(candidate) else {
            if errno == ENOENT || errno == ENOTDIR { throw .fileNotFound(name) }
            throw .unreadable(name: name, reason: String(cString: strerror(errno)))
        }
        let prefix = root.hasSuffix("/") ? root : root + "/"
        guard resolved.hasPrefix(prefix) else { throw .outsideDirectory(name) }
        return resolved
    }

    /// Reads a regular file of at most `maximumSize` bytes. The size is checked on the open descriptor before
    /// reading, and the read stops one byte past the limit in case the file grew meanwhile.
    static func read(_ path: String, name: String, maximumSize: Int) throws(DFUPackageError) -> [UInt8] {
        // O_NOFOLLOW: the path was resolved a moment ago; a symlink swapped in since is refused, not followed.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { throw .unreadable(name: name, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw .unreadable(name: name, reason: String(cString: strerror(errno)))
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw .unreadable(name: name, reason: "it is not a regular file")
        }
        guard Int(status.st_size) <= maximumSize else { throw .tooLarge(bytes: Int(status.st_size), limit: maximumSize) }

        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(status.st_size))
        while bytes.count <= maximumSize {
            let chunk: Data?
            do {
                chunk = try handle.read(upToCount: min(1 << 16, maximumSize + 1 - bytes.count))
            } catch {
                throw .unreadable(name: name, reason: "\(error)")
            }
            guard let chunk, !chunk.isEmpty else { break }
            bytes += chunk
        }
        guard bytes.count <= maximumSize else { throw .tooLarge(bytes: bytes.count, limit: maximumSize) }
        return bytes
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
