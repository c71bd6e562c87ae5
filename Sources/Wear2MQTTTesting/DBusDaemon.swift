import Foundation

/// A private dbus-daemon on a Unix socket in a temporary directory, for one test or suite: the simulator
/// owns `org.bluez` there and the gateway connects to it as if it were the system bus. Killed by pid.
public final class DBusDaemon: Sendable {
    public let directory: TemporaryDirectory
    public let address: String
    private let child: ChildProcess

    public init() async throws {
        directory = try TemporaryDirectory(prefix: "dbus")
        let socket = directory.file("bus")
        address = "unix:path=\(socket)"
        // The session configuration allows any connection to own any name and to pass file descriptors.
        let configuration = try directory.write("bus.conf", """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>\(address)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
          <limit name="max_incoming_bytes">1000000000</limit>
          <limit name="max_outgoing_bytes">1000000000</limit>
          <limit name="max_message_size">1000000000</limit>
          <limit name="max_replies_per_connection">50000</limit>
          <limit name="max_match_rules_per_connection">50000</limit>
        </busconfig>
        """)
        child = try ChildProcess(executable: "/usr/bin/dbus-daemon",
                                 arguments: ["--config-file=\(configuration)", "--nofork", "--nopidfile", "--print-address"],
                                 outputPath: directory.file("daemon.out"), errorPath: directory.file("daemon.err"))
        // The daemon prints its address once it accepts connections; the socket file alone appears earlier.
        let ready = await eventually(timeout: .seconds(10)) { [child] in
            FileManager.default.fileExists(atPath: socket) && child.output.contains("unix:")
        }
        guard ready else { throw TestSetupError("dbus-daemon did not start: \(child.errorOutput)") }
    }

    public var pid: Int32 { child.pid }
    public var isRunning: Bool { child.isRunning }

    /// The environment a child process needs to treat this bus as its system bus (and session bus).
    public var environment: [String: String] {
        ["DBUS_SYSTEM_BUS_ADDRESS": address, "DBUS_SESSION_BUS_ADDRESS": address]
    }

    public func stop() async {
        await child.stop()
        directory.remove()
    }

    public func kill() async {
        child.signal(SIGKILL)
        await child.waitForExit()
    }
}
