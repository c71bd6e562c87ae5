#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The gateway's state (`gateway.state_dir`, its `spool/` and `drivers/` folders) holds unsent messages and device
/// secrets, so its folders are 0700 whatever the umask: `mkdir`'s mode is filtered by the umask, so the mode is set
/// again with `chmod` after creating. A folder that already exists with group or other bits (made by hand, or by an
/// older version under a loose umask) is tightened, and the caller is told so it can warn. Files inside are created
/// 0600 by their writers (`AtomicFile`, the spool's segments).
///
/// It does not touch parents that already exist (`/var/lib` is not the gateway's), nor folders owned by another user.
public enum OwnerOnlyDirectory {
    public static let mode: mode_t = 0o700

    /// Creates `path` and any missing parent as 0700, or tightens it to 0700 if it exists. Returns the mode the
    /// existing folder had when it was tightened, nil otherwise.
    @discardableResult
    public static func prepare(_ path: String) throws(OwnerOnlyDirectoryError) -> mode_t? {
        var status = stat()
        if stat(path, &status) == 0 {
            guard (status.st_mode & S_IFMT) == S_IFDIR else { throw .notADirectory(path) }
            let permissions = status.st_mode & 0o7777
            guard permissions & 0o077 != 0, status.st_uid == geteuid() else { return nil }
            guard chmod(path, mode) == 0 else { throw .failed(path, errno: errno) }
            return permissions
        }
        guard errno == ENOENT else { throw .failed(path, errno: errno) }
        let parent = Self.parent(of: path)
        if !parent.isEmpty, parent != path { try createMissing(parent) }
        guard mkdir(path, mode) == 0 || errno == EEXIST else { throw .failed(path, errno: errno) }
        guard chmod(path, mode) == 0 else { throw .failed(path, errno: errno) }
        return nil
    }

    /// A missing parent is created 0700 like the folder itself; an existing one is left as it is.
    private static func createMissing(_ path: String) throws(OwnerOnlyDirectoryError) {
        var status = stat()
        if stat(path, &status) == 0 { return }
        try prepare(path)
    }

    static func parent(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }
}

public enum OwnerOnlyDirectoryError: Error, Equatable, Sendable, CustomStringConvertible {
    case notADirectory(String)
    case failed(String, errno: Int32)

    public var description: String {
        switch self {
        case .notADirectory(let path): "\(path) exists and is not a directory"
        case .failed(let path, let code): "\(path): \(String(cString: strerror(code)))"
        }
    }
}
