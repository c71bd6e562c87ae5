import DBus
import Foundation
import Simulator
import Testing
import Wear2MQTTTesting
import Wearables

/// The built `wear2mqtt-sim` run as a child process, as the gateway's end-to-end tests and the demo run it.
struct SimulatorProcess {
    let child: ChildProcess
    let scenarioPath: String

    /// The executable sits next to the test bundle in SwiftPM's build folder.
    static var executablePath: String {
        let bundle = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: bundle).deletingLastPathComponent().appendingPathComponent("wear2mqtt-sim").path
    }

    static func start(on daemon: DBusDaemon, scenario yaml: String, name: String = "sim") throws -> SimulatorProcess {
        let path = try daemon.directory.write("\(name).yaml", yaml)
        let child = try ChildProcess(executable: executablePath,
                                     arguments: ["run", "--bus", daemon.address, "--scenario", path, "--log-level", "debug"],
                                     outputPath: daemon.directory.file("\(name).out"), errorPath: daemon.directory.file("\(name).err"))
        return SimulatorProcess(child: child, scenarioPath: path)
    }

    /// Runs `wear2mqtt-sim` with `arguments` to completion.
    static func run(_ arguments: [String], in daemon: DBusDaemon, name: String) async throws -> (status: Int32?, output: String, error: String) {
        let child = try ChildProcess(executable: executablePath, arguments: arguments,
                                     outputPath: daemon.directory.file("\(name).out"), errorPath: daemon.directory.file("\(name).err"))
        let status = await child.waitForExit(timeout: .seconds(20))
        if status == nil { child.signal(SIGKILL) }
        return (status, child.output, child.errorOutput)
    }
}

@Suite(.timeLimit(.minutes(2)))
struct ChildProcessTests {
    static let strapPath = SimulatorHarness.devicePath(SimulatorHarness.strap)

    /// The inode behind `fd`: if it changes, something else in the test process closed the number and it was reused.
    static func inode(_ fd: UnixFileDescriptor) -> UInt64 {
        var status = stat()
        return fstat(fd.rawValue, &status) == 0 ? UInt64(status.st_ino) : 0
    }

    @Test func theExecutableStreamsAcquiredNotificationsAndStopsCleanlyOnSIGTERM() async throws {
        let daemon = try await DBusDaemon()
        let simulator = try SimulatorProcess.start(on: daemon, scenario: SimulatorHarness.scenario())
        let client = try BusConnection(.address(daemon.address))
        #expect(await SimulatorControlClient(bus: client).untilServing(), "\(simulator.child.errorOutput)")
        let recorder = try await SignalRecorder(client, rule: MatchRule(sender: "org.bluez"))
        let harness = ClientCalls(client: client, signals: recorder)
        try await harness.connect(SimulatorHarness.strap)
        let reply = try await client.call(destination: "org.bluez", path: Self.strapPath.appending("service000c/char000d"),
                                          interface: "org.bluez.GattCharacteristic1", member: "AcquireNotify",
                                          arguments: [.stringVariantDictionary([:])])
        let fd = try #require(reply.first?.unixFDValue)
        let inode = Self.inode(fd)
        for _ in 0..<3 {
            let datagram = try #require(try await readDatagram(fd, within: .seconds(2)))
            #expect((40...110).contains(try HeartRateMeasurement.decode(datagram).bpm))
        }
        simulator.child.signal(SIGTERM)
        #expect(await simulator.child.waitForExit(timeout: .seconds(5)) == 0)
        #expect(simulator.child.errorOutput.contains("stopping (SIGTERM)"))
        #expect(try await client.nameOwner("org.bluez") == nil)
        #expect(await socketClosed(fd, within: .seconds(2)),
                "the notify socket closes with the simulator (socket inode at receipt \(inode), now \(Self.inode(fd)))")
        recorder.stop()
        client.close()
        await daemon.stop()
    }

    @Test func killedAndRestartedTheSimulatorComesBackWithItsPairedDevices() async throws {
        let daemon = try await DBusDaemon()
        let yaml = SimulatorHarness.scenario().replacingOccurrences(of: "    name: HRM-Sim\n", with: "    name: HRM-Sim\n    paired: true\n")
        let first = try SimulatorProcess.start(on: daemon, scenario: yaml, name: "first")
        let client = try BusConnection(.address(daemon.address))
        #expect(await SimulatorControlClient(bus: client).untilServing())
        let owners = try await client.signals(MatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
                                                        member: "NameOwnerChanged", arg0: "org.bluez"))
        first.child.signal(SIGKILL)
        await first.child.waitForExit()
        var iterator = owners.makeAsyncIterator()
        let gone = try #require(await iterator.next())
        #expect(gone.body.last == "", "org.bluez lost its owner")
        let second = try SimulatorProcess.start(on: daemon, scenario: yaml, name: "second")
        let back = try #require(await iterator.next())
        #expect(back.body.last?.stringValue?.hasPrefix(":") == true)
        #expect(await SimulatorControlClient(bus: client).untilServing())
        let tree = try await client.call(destination: "org.bluez", path: "/", interface: "org.freedesktop.DBus.ObjectManager",
                                         member: "GetManagedObjects")
        let paths = tree.first?.dictionaryEntries?.compactMap(\.key.objectPathValue) ?? []
        #expect(paths.contains(Self.strapPath), "a paired device is known from the start, as bluetoothd loads it from storage")
        #expect(!paths.contains(SimulatorHarness.devicePath(SimulatorHarness.tag)))
        await second.child.stop()
        client.close()
        await daemon.stop()
    }

    @Test func aMalformedScenarioExitsWithStatusOneNamingTheKey() async throws {
        let daemon = try await DBusDaemon()
        let path = try daemon.directory.write("bad.yaml", "devices:\n  - kind: heart_rate_strap\n    address: C0:FF:EE:00:00:01\n    options: { rate_hz: 900 }\n")
        let result = try await SimulatorProcess.run(["run", "--bus", daemon.address, "--scenario", path], in: daemon, name: "bad")
        #expect(result.status == 1)
        #expect(result.error.contains("devices[0].options.rate_hz"), "\(result.error)")
        await daemon.stop()
    }

    @Test func controlVerbsDriveTheRunningSimulator() async throws {
        let daemon = try await DBusDaemon()
        let simulator = try SimulatorProcess.start(on: daemon, scenario: SimulatorHarness.scenario())
        let client = try BusConnection(.address(daemon.address))
        #expect(await SimulatorControlClient(bus: client).untilServing())
        let list = try await SimulatorProcess.run(["control", "--bus", daemon.address, "list"], in: daemon, name: "list")
        #expect(list.status == 0)
        #expect(list.output.contains("\(SimulatorHarness.tag)  key_finder  advertising"), "\(list.output)\(list.error)")
        let silent = try await SimulatorProcess.run(["control", "--bus", daemon.address, "advertising", SimulatorHarness.tag, "off"],
                                                    in: daemon, name: "silent")
        #expect(silent.status == 0)
        let devices = try await SimulatorControlClient(bus: client).listDevices()
        #expect(devices.first { $0.address == SimulatorHarness.tag }?.state == "silent")
        let wrong = try await SimulatorProcess.run(["control", "--bus", daemon.address, "drop-link", SimulatorHarness.tag],
                                                   in: daemon, name: "wrong")
        #expect(wrong.status == 1)
        #expect(wrong.error.contains("org.wear2mqtt.Simulator.Error.NotConnected"))
        await simulator.child.stop()
        client.close()
        await daemon.stop()
    }

    @Test func radioFaultVerbsDriveTheRunningSimulatorsAdapter() async throws {
        let daemon = try await DBusDaemon()
        let simulator = try SimulatorProcess.start(on: daemon, scenario: SimulatorHarness.scenario())
        let client = try BusConnection(.address(daemon.address))
        #expect(await SimulatorControlClient(bus: client).untilServing())
        func control(_ words: String...) async throws -> (status: Int32?, output: String, error: String) {
            try await SimulatorProcess.run(["control", "--bus", daemon.address] + words, in: daemon, name: words.joined(separator: "-"))
        }
        #expect(try await control("deafen-scanner", "power").status == 0)
        #expect(try await control("stick-discovery").status == 0)
        let faulty = try await control("inspect", "adapter")
        #expect(faulty.output.contains("scanner_deaf=power") && faulty.output.contains("discovery_stuck=yes"), "\(faulty)")
        let unknownCure = try await control("deafen-scanner", "sometimes")
        #expect(unknownCure.status != 0 && unknownCure.error.contains("restart or power"), "\(unknownCure)")
        #expect(try await control("remove-adapter").status == 0)
        let twice = try await control("remove-adapter")
        #expect(twice.status == 1 && twice.error.contains("org.wear2mqtt.Simulator.Error.AdapterRemoved"), "\(twice)")
        #expect(try await control("inspect", "adapter").output.contains("adapter=removed"))
        #expect(try await control("restore-adapter").status == 0)
        let back = try await control("inspect", "adapter")
        #expect(back.output.contains("adapter=present") && back.output.contains("scanner_deaf=no"), "\(back)")
        await simulator.child.stop()
        client.close()
        await daemon.stop()
    }

    static let bleakScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("bleak_interop.py").path

    @Test(arguments: [false, true])
    func bleakDiscoversTheStrapConnectsAndReceivesHeartRateNotifications(acquire: Bool) async throws {
        let daemon = try await DBusDaemon()
        let simulator = try SimulatorProcess.start(on: daemon, scenario: SimulatorHarness.scenario())
        let client = try BusConnection(.address(daemon.address))
        #expect(await SimulatorControlClient(bus: client).untilServing())
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = daemon.address
        let name = acquire ? "bleak-acquire" : "bleak"
        let bleak = try ChildProcess(executable: try TestTools.require(TestTools.python),
                                     arguments: [Self.bleakScript, SimulatorHarness.strap, "5"] + (acquire ? ["--acquire"] : []),
                                     environment: environment,
                                     outputPath: daemon.directory.file("\(name).out"), errorPath: daemon.directory.file("\(name).err"))
        let status = await bleak.waitForExit(timeout: .seconds(60))
        if status == nil { bleak.signal(SIGKILL) }
        #expect(status == 0, "\(bleak.output)\(bleak.errorOutput)")
        #expect(bleak.output.hasPrefix("PASS"), "\(bleak.output)\(bleak.errorOutput)")
        await simulator.child.stop()
        client.close()
        await daemon.stop()
    }
}

/// The harness's discovery and connection helpers for a simulator that runs in another process.
struct ClientCalls {
    let client: BusConnection
    let signals: SignalRecorder

    func connect(_ address: String) async throws {
        let adapter = SimulatorHarness.adapter
        let path = SimulatorHarness.devicePath(address)
        func call(_ path: ObjectPath, _ interface: String, _ member: String, _ arguments: [DBusValue] = []) async throws {
            try await client.call(destination: "org.bluez", path: path, interface: interface, member: member, arguments: arguments)
        }
        try await call(adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", [.stringVariantDictionary(["Transport": "le"])])
        try await call(adapter, "org.bluez.Adapter1", "StartDiscovery")
        _ = try await signals.next { $0.isInterfacesAdded(at: path) }
        try await call(adapter, "org.bluez.Adapter1", "StopDiscovery")
        try await call(path, "org.bluez.Device1", "Connect")
        _ = try await signals.next { $0.changes(path, "org.bluez.Device1")?["ServicesResolved"] == true }
    }
}

/// A child Foundation has not reaped is read from /proc: how `waitForExit` survives a missed SIGCHLD.
@Suite struct ZombieExitStatusTests {
    @Test func aZombiesExitCodeAndSignalAreReadFromProc() throws {
        for (script, expected) in [("exit 3", Int32(3)), ("kill -KILL $$", SIGKILL)] {
            var pid: pid_t = 0
            let arguments = ["/bin/sh", "-c", script]
            var argv = arguments.map { strdup($0) } + [nil]
            defer { for pointer in argv { free(pointer) } }
            #expect(posix_spawn(&pid, "/bin/sh", nil, nil, &argv, environ) == 0)
            // Waits for the exit without reaping: the child stays a zombie until waitpid below.
            var info = siginfo_t()
            #expect(waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == 0)
            #expect(ChildProcess.zombieExitStatus(pid) == expected, "\(script)")
            var reaped: Int32 = 0
            _ = waitpid(pid, &reaped, 0)
        }
        #expect(ChildProcess.zombieExitStatus(getpid()) == nil, "a running process is not a zombie")
    }
}
