import Foundation
@testable import Gateway
import Testing
import Wear2MQTTTesting

/// systemd `Type=notify` (sd_notify(3) without libsystemd): the messages, when the gateway says what, and the client
/// against a real datagram socket. The daemon's use of it runs in Tests/EndToEndTests/SystemdNotifyEndToEndTests.swift.
@Suite("systemd notify")
struct SystemdNotifyTests {
    static func status(_ broker: ServiceStatus.Broker, _ bluez: ServiceStatus.BlueZ = .available, _ connected: Int = 0,
                       of managed: Int = 0) -> ServiceStatus {
        ServiceStatus(broker: broker, bluez: bluez, devicesConnected: connected, devicesManaged: managed)
    }

    @Test("several notifications share one datagram, one KEY=value per line")
    func messageComposition() {
        #expect(SystemdNotification.message([.ready, .status("broker connected, 3/5 devices connected")])
                == "READY=1\nSTATUS=broker connected, 3/5 devices connected")
        #expect(SystemdNotification.message([.watchdog]) == "WATCHDOG=1")
        #expect(SystemdNotification.message([.stopping]) == "STOPPING=1")
    }

    @Test("a status is one line: line breaks become one space")
    func statusIsOneLine() {
        #expect(SystemdNotification.status("broker\nreconnecting,\r\n\n2/2\n").assignment == "STATUS=broker reconnecting, 2/2")
    }

    @Test("the status line names the broker's state and the devices connected of those managed")
    func summary() {
        #expect(Self.status(.connected, .available, 3, of: 5).summary == "broker connected, 3/5 devices connected")
        #expect(Self.status(.reconnecting, .available, 0, of: 2).summary == "broker reconnecting, 0/2 devices connected")
        #expect(Self.status(.connecting, .unknown).summary == "broker connecting, waiting for BlueZ, 0/0 devices connected")
        #expect(Self.status(.connected, .absent).summary == "broker connected, BlueZ not available, 0/0 devices connected")
    }

    @Test("ready once the broker is connected and BlueZ's objects are loaded or BlueZ is known to be absent")
    func readiness() {
        #expect(!Self.status(.connecting, .available).isReady)
        #expect(!Self.status(.reconnecting, .available).isReady)
        #expect(!Self.status(.connected, .unknown).isReady)
        #expect(Self.status(.connected, .available).isReady)
        #expect(Self.status(.connected, .absent).isReady)
    }

    @Test("READY=1 once, STATUS only when its line changes, nothing after STOPPING=1")
    func supervisionState() {
        var state = SupervisionState()
        #expect(state.observe(Self.status(.connecting, .unknown)) == [.status("broker connecting, waiting for BlueZ, 0/0 devices connected")])
        #expect(state.observe(Self.status(.connecting, .unknown)) == [])
        #expect(!state.hasSentReady)
        #expect(state.observe(Self.status(.connected, .available, 0, of: 1))
                == [.status("broker connected, 0/1 devices connected"), .ready])
        #expect(state.hasSentReady)
        #expect(state.observe(Self.status(.connected, .available, 0, of: 1)) == [])
        #expect(state.observe(Self.status(.reconnecting, .available, 1, of: 1)) == [.status("broker reconnecting, 1/1 devices connected")])
        #expect(state.observe(Self.status(.connected, .available, 1, of: 1)) == [.status("broker connected, 1/1 devices connected")])
        #expect(state.beginStopping() == [.stopping])
        #expect(state.beginStopping() == [])
        #expect(state.observe(Self.status(.reconnecting, .available, 0, of: 1)) == [])
    }

    @Test("the watchdog is pinged every half of WATCHDOG_USEC, only by the process WATCHDOG_PID names")
    func watchdogSettings() {
        #expect(WatchdogSettings.pingInterval(environment: ["WATCHDOG_USEC": "30000000"], pid: 42) == .seconds(15))
        #expect(WatchdogSettings.pingInterval(environment: ["WATCHDOG_USEC": "400000", "WATCHDOG_PID": "42"], pid: 42) == .milliseconds(200))
        #expect(WatchdogSettings.pingInterval(environment: ["WATCHDOG_USEC": "400000", "WATCHDOG_PID": "41"], pid: 42) == nil)
        #expect(WatchdogSettings.pingInterval(environment: ["WATCHDOG_USEC": "0"], pid: 42) == nil)
        #expect(WatchdogSettings.pingInterval(environment: ["WATCHDOG_USEC": "soon"], pid: 42) == nil)
        #expect(WatchdogSettings.pingInterval(environment: [:], pid: 42) == nil)
    }

    @Test("NOTIFY_SOCKET is a path (NUL-terminated in sun_path) or an abstract name (@ becomes the leading NUL)")
    func addresses() {
        #expect(NotifySocketAddress("/run/systemd/notify")?.path == Array("/run/systemd/notify".utf8) + [0])
        #expect(NotifySocketAddress("@notify")?.path == [0] + Array("notify".utf8))
        #expect(NotifySocketAddress("vsock:2:1234") == nil)
        #expect(NotifySocketAddress("") == nil)
        #expect(NotifySocketAddress("@") == nil)
        #expect(NotifySocketAddress("/" + String(repeating: "x", count: 200)) == nil)
    }

    @Test("without NOTIFY_SOCKET there is no client and no supervisor")
    func nothingWithoutNotifySocket() throws {
        #expect(NotifySocket(environment: ["WATCHDOG_USEC": "400000"]) == nil)
    }

    @Test("the client's datagrams reach an abstract socket, one per send")
    func abstractSocket() async throws {
        let listener = try NotifySocketListener.abstract()
        let client = try #require(NotifySocket(environment: ["NOTIFY_SOCKET": listener.notifySocket]))
        #expect(client.send([.status("broker connected,\n1/1 devices connected"), .ready]) == nil)
        #expect(client.send([.watchdog]) == nil)
        #expect(await listener.waitUntil { $0.count == 3 })
        #expect(listener.datagrams == ["STATUS=broker connected, 1/1 devices connected\nREADY=1", "WATCHDOG=1"])
    }

    @Test("the client's datagrams reach a socket at a path")
    func pathSocket() async throws {
        let directory = try TemporaryDirectory(prefix: "notify")
        defer { directory.remove() }
        let listener = try NotifySocketListener(path: directory.file("notify.sock"))
        let client = try #require(NotifySocket(environment: ["NOTIFY_SOCKET": listener.notifySocket]))
        #expect(client.send([.stopping]) == nil)
        #expect(await listener.waitUntil { $0 == ["STOPPING=1"] })
    }

    @Test("a socket nobody listens on is an error the caller may log, never a wait")
    func nobodyListening() throws {
        let client = try #require(NotifySocket(environment: ["NOTIFY_SOCKET": "@wear2mqtt-test-nobody-\(UUID().uuidString)"]))
        #expect(client.send([.watchdog]) == ECONNREFUSED)
    }
}
