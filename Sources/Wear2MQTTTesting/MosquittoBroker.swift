import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A real mosquitto broker on a free loopback port, for one test or suite. `stop()` and `start()` again keep
/// the port, so a client can be tested across a broker restart. Killed by pid when stopped or released.
public final class MosquittoBroker: @unchecked Sendable {
    // @unchecked: the mutable `child` is only touched by the test that owns the broker, one step at a time.
    public struct TLSFiles: Sendable {
        public var caFile: String
        public var certificateFile: String
        public var keyFile: String
        public var requireClientCertificate: Bool

        public init(caFile: String, certificateFile: String, keyFile: String, requireClientCertificate: Bool) {
            self.caFile = caFile
            self.certificateFile = certificateFile
            self.keyFile = keyFile
            self.requireClientCertificate = requireClientCertificate
        }
    }

    public let port: Int
    /// Holds the port from the moment it is chosen, so that no other test's server (or outgoing connection) takes it
    /// before mosquitto binds it: a broker created now and started later once found another test's broker on it.
    private let reservation: FreePort.Reservation
    public let directory: TemporaryDirectory
    private let configurationPath: String
    private var child: ChildProcess?
    private var starts = 0

    /// - Parameters:
    ///   - passwordFile: a file made by `mosquitto_passwd`; anonymous clients are refused when set.
    ///   - persistence: keep retained messages and sessions across `stop()` / `start()`.
    ///   - extraLines: more configuration, such as a bridge to another broker (`connection`, `address`, `topic`).
    public init(passwordFile: String? = nil, tls: TLSFiles? = nil, persistence: Bool = false, extraLines: [String] = []) throws {
        directory = try TemporaryDirectory(prefix: "mosquitto")
        reservation = try FreePort.reserve()
        port = reservation.port
        var lines = ["listener \(port) 127.0.0.1", "log_dest stderr", "log_type error", "log_type warning",
                     "max_queued_messages 100000",
                     // Run as whoever runs the test: as root, mosquitto would otherwise switch to the
                     // `mosquitto` user, which cannot read the test's keys or write its persistence file.
                     "user \(String(cString: getpwuid(getuid()).pointee.pw_name))"]
        if let passwordFile {
            lines += ["allow_anonymous false", "password_file \(passwordFile)"]
        } else {
            lines += ["allow_anonymous true"]
        }
        if let tls {
            lines += ["cafile \(tls.caFile)", "certfile \(tls.certificateFile)", "keyfile \(tls.keyFile)",
                      "require_certificate \(tls.requireClientCertificate)"]
        }
        if persistence {
            lines += ["persistence true", "persistence_location \(directory.path)/", "autosave_interval 1"]
        }
        lines += extraLines
        configurationPath = try directory.write("mosquitto.conf", lines.joined(separator: "\n") + "\n")
    }

    public var pid: Int32? { child?.pid }
    public var isRunning: Bool { child?.isRunning ?? false }

    /// Starts mosquitto and waits until it accepts connections.
    public func start() async throws {
        starts += 1
        child = try ChildProcess(executable: try Self.executable(), arguments: ["-c", configurationPath],
                                 outputPath: directory.file("out-\(starts).log"),
                                 errorPath: directory.file("err-\(starts).log"))
        let ready = await eventually(timeout: .seconds(10)) { FreePort.isListening(port: port) }
        guard ready else {
            throw BrokerError.didNotStart(child?.errorOutput ?? "")
        }
    }

    /// SIGTERM and wait: mosquitto writes its persistence file on the way out.
    public func stop() async {
        await child?.stop()
        child = nil
    }

    /// SIGKILL: a broker that vanishes without a goodbye.
    public func kill() async {
        child?.signal(SIGKILL)
        await child?.waitForExit()
        child = nil
    }

    public func remove() async {
        await stop()
        directory.remove()
    }

    public enum BrokerError: Error, CustomStringConvertible {
        case didNotStart(String)
        case notInstalled

        public var description: String {
            switch self {
            case .didNotStart(let log): "mosquitto did not start: \(log)"
            case .notInstalled: "mosquitto is not installed (apt-get install mosquitto mosquitto-clients)"
            }
        }
    }

    static func executable() throws -> String {
        for candidate in ["/usr/sbin/mosquitto", "/usr/bin/mosquitto", "/usr/local/sbin/mosquitto"]
        where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        throw BrokerError.notInstalled
    }

    deinit {
        if let child, child.isRunning { child.signal(SIGKILL) }
    }
}

/// Loopback ports for test servers.
public enum FreePort {
    /// A loopback port kept bound (with SO_REUSEADDR, not listening) while the value lives: the kernel gives it to
    /// no other `bind` to port 0 nor to an outgoing connection, and a server that sets SO_REUSEADDR itself (mosquitto
    /// does) can still bind and listen on it.
    public final class Reservation: Sendable {
        public let port: Int
        private let descriptor: Int32

        fileprivate init(port: Int, descriptor: Int32) {
            self.port = port
            self.descriptor = descriptor
        }

        deinit { close(descriptor) }
    }

    public static func reserve() throws -> Reservation {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0
                && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        return Reservation(port: Int(UInt16(bigEndian: address.sin_port)), descriptor: fd)
    }

    /// A loopback port reserved for the rest of the process: between this call and the server's `bind` no outgoing
    /// connection nor other test takes it, as one did once under the full suite (the gateway's metrics server then
    /// could not listen). Every server the tests start sets SO_REUSEADDR (the gateway's, the simulated proxy,
    /// mosquitto), so it binds over the reservation; a test makes a handful, so keeping them costs nothing.
    public static func loopback() throws -> Int {
        let reservation = try reserve()
        kept.withLock { $0.append(reservation) }
        return reservation.port
    }

    private static let kept = Mutex<[Reservation]>([])

    public static func isListening(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
