#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Gateway
import Logging
import Simulator
import Wear2MQTTTesting

/// One measured configuration: which process carries the samples (the gateway, the raw relay or the Python
/// peer), how it subscribes, its batching, and the devices.
struct RunSpec: Sendable {
    enum Carrier: String, Sendable, Codable {
        case gateway = "wear2mqtt"
        case relay
        /// `floor-relay`: the batched floor (issue 43), one read per source and one write per wake-up.
        case floor = "floor-relay"
        /// `python/peer.py`: bleak + paho-mqtt, publishing the gateway's heart-rate JSON.
        case peer = "python-peer"
    }

    /// What the run is for in the report: `throughput`, `latency`, `rss`, `relay-ratio`, `batching`, and in the
    /// realistic profile `realistic`, `mixed`, `idle`, in the radios profile `cost`, `scale`.
    var purpose: String
    var carrier: Carrier
    var method: String
    var batchMilliseconds: Int
    var workload: Workload
    var seconds: Double
    /// The one CPU the carrier is held to (`taskset`), or nil to let it use every core.
    var cpu: Int? = nil
    /// Reads the carrier's memory and CPU this often during the window (`series`), or never.
    var sampleEvery: Double? = nil
    /// The gateway's web interface: nil off; on, with this many browsers open during the window (`BenchBrowsers`).
    var browsers: Int? = nil
    /// Gateway runs only: the heart-rate sensors are heard through these simulated ESPHome proxies (`BenchProxies`)
    /// instead of the local adapter's simulator; nil: the local adapter.
    var radios: ProxyRadios? = nil

    /// The last CPU: the bench and broker are started first and do not care which one they get.
    static var oneCore: Int { max(0, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) - 1) }

    var title: String {
        var text = "\(carrier.rawValue) \(radios.map { "via " + $0.summary } ?? method)"
        if carrier == .gateway && batchMilliseconds > 0 { text += " batch \(batchMilliseconds) ms" }
        if cpu != nil { text += " (1 core)" }
        return text
    }
}

/// Latency percentiles in milliseconds.
struct LatencySummary: Codable, Sendable {
    var samples: UInt64
    var p50Ms: Double
    var p90Ms: Double
    var p99Ms: Double
    var p999Ms: Double
    var maxMs: Double
    var meanMs: Double
}

struct RunResult: Codable, Sendable {
    var purpose: String
    var carrier: String
    var method: String
    var batchMs: Int
    var workload: Workload
    var devices: Int
    var windowSeconds: Double
    /// From start until every device delivered its first sample.
    var warmUpSeconds: Double
    var offeredSamplesPerSecond: Double
    /// Heart-rate samples the simulator sent, per second of the window.
    var heartRateSentPerSecond: Double
    /// Heart-rate samples received during the window, per second.
    var heartRateDeliveredPerSecond: Double
    var boseRecordsSentPerSecond: Double
    var boseSamplesDeliveredPerSecond: Double
    /// Every sample received during the window, per second.
    var samplesPerSecond: Double
    /// MQTT messages carrying samples received during the window, per second.
    var messagesPerSecond: Double
    /// Heart-rate samples sent during the window (by sequence) and never received.
    var lost: UInt64
    var lostPercent: Double
    var sentInWindow: UInt64
    /// Samples that arrived with a sequence the ledger no longer held, or out of order.
    var unmatched: UInt64
    var outOfOrder: UInt64
    var latency: LatencySummary
    /// Percent of one core over the window: the carrier (`wear2mqtt` or `relay`), `mosquitto`, `dbus-daemon`, and
    /// `bench` (this process: the simulator and the subscriber).
    var cpuPercent: [String: Double]
    var peakRSSMiB: Double
    var rssMiB: Double
    /// The end-of-window RSS split: anonymous (heap, stacks) and file-backed (executable, shared libraries).
    var rssAnonymousMiB: Double
    var rssFileMiB: Double
    /// How fast the anonymous part grew during the window, MiB per minute: a steady stream should hold it flat,
    /// so growth here is a leak or a queue that does not drain.
    var anonymousGrowthMiBPerMinute: Double
    /// The carrier's threads over the window: context switches and time on a core (`/proc/<pid>/task/*`).
    var carrierThreads: ThreadActivity?
    /// The readings of a window with `sampleEvery` (the soak).
    var series: [WindowPoint]? = nil
    /// With the web interface on: browsers open, the messages they received per second together, and what the
    /// gateway dropped for them.
    var browsersOpen: Int? = nil
    var browserMessagesPerSecond: Double? = nil
    var browserDropped: Int? = nil
    /// The proxies the heart-rate sensors were heard through (`--profile radios`), and their event loop threads in
    /// the bench process over the window: what serving the gateway cost the simulated proxies.
    var radios: ProxyRadios? = nil
    var proxyLoops: ThreadActivity? = nil
    var notes: [String]
}

/// Runs one `RunSpec`: a private bus, the simulator in this process, the subscriber, the carrier as a child
/// process; warm-up until every device delivered, the window, a drain, and teardown of everything it started.
struct MeasurementRunner: Sendable {
    let broker: BenchBroker
    let keepLogs: Bool
    /// The gateway's `mqtt.coalesce_ms` and the relay's `--coalesce-ms`.
    let coalesceMilliseconds: Int
    /// The interpreter and script of the Python peer, for runs that carry samples through it.
    var peer: PythonPeer?

    static let simulatorLogger: Logger = {
        var logger = Logger(label: "wear2mqtt-bench.simulator")
        logger.logLevel = .warning
        return logger
    }()

    func run(_ spec: RunSpec, log: (String) -> Void) async throws -> RunResult {
        let workload = spec.workload
        let directory = try TemporaryDirectory(prefix: "wear2mqtt-bench-run")
        ChildProcesses.shared.register(directory: directory.path)
        let bus = try await DBusDaemon()
        ChildProcesses.shared.register(bus.pid)
        ChildProcesses.shared.register(directory: bus.directory.path)
        let ledger = SendLedger(deviceCount: workload.straps)
        let records = RecordCounter()
        let simulator: BlueZSimulator
        do {
            let scenario = workload.scenario(ledger: ledger, records: records, strapsInRange: spec.radios == nil)
            simulator = try await BlueZSimulator.start(scenario, on: .address(bus.address), logger: Self.simulatorLogger)
        } catch {
            await bus.stop()
            throw BenchError("the simulator did not start: \(error)")
        }
        let proxies: BenchProxies?
        do {
            proxies = try spec.radios.map { try BenchProxies($0, workload: workload, ledger: ledger) }
        } catch {
            await simulator.stop()
            await bus.stop()
            throw error
        }
        let subscriber: SampleSubscriber
        let carrier: ChildProcess
        let frontendPort = spec.browsers == nil ? nil : try Self.freeLoopbackPort()
        do {
            subscriber = try SampleSubscriber(port: broker.port, topics: ["bench/+/sensor/#", "relay/#"], ledger: ledger,
                                              heartRateDevices: workload.straps, boseDevices: workload.bose)
            try await subscriber.waitUntilSubscribed()
            carrier = try startCarrier(spec, bus: bus.address, directory: directory, frontendPort: frontendPort,
                                       proxies: proxies)
        } catch {
            proxies?.stop()
            await simulator.stop()
            await bus.stop()
            if !keepLogs { directory.remove() }
            throw error
        }
        ChildProcesses.shared.register(carrier.pid)

        func tearDown() async {
            await carrier.stop(grace: .seconds(5))
            ChildProcesses.shared.unregister(carrier.pid)
            subscriber.stop()
            proxies?.stop()
            await simulator.stop()
            await bus.stop()
            ChildProcesses.shared.unregister(bus.pid)
            if !keepLogs { directory.remove() }
        }

        do {
            let result = try await measure(spec, carrier: carrier, bus: bus, subscriber: subscriber, ledger: ledger,
                                           records: records, frontendPort: frontendPort, log: log)
            await tearDown()
            return result
        } catch {
            log("  \(spec.carrier.rawValue) log tail:\n" + carrier.errorOutput.split(separator: "\n").suffix(8).joined(separator: "\n"))
            await tearDown()
            throw error
        }
    }

    private func measure(_ spec: RunSpec, carrier: ChildProcess, bus: DBusDaemon, subscriber: SampleSubscriber,
                         ledger: SendLedger, records: RecordCounter, frontendPort: Int?,
                         log: (String) -> Void) async throws -> RunResult {
        let workload = spec.workload
        let started = ContinuousClock.now
        // Warm-up: every device connected and delivering.
        let patience = Duration.seconds(60) + .milliseconds(400 * workload.deviceCount)
        while true {
            let seen = subscriber.everyDeviceSeen
            if seen.heartRate == workload.straps && seen.bose == workload.bose { break }
            guard carrier.isRunning else {
                throw BenchError("\(spec.carrier.rawValue) exited during warm-up: \(carrier.errorOutput.suffix(600))")
            }
            guard ContinuousClock.now - started < patience else {
                throw BenchError("warm-up: after \(patience) only \(seen.heartRate)/\(workload.straps) heart-rate and "
                                 + "\(seen.bose)/\(workload.bose) Bose devices delivered samples")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let warmUp = ContinuousClock.now - started
        // Let the connection-time work (reads, configuration writes, retained state) settle.
        try await Task.sleep(for: .seconds(1))
        var browsers: BenchBrowsers?
        if let frontendPort, let count = spec.browsers, count > 0 {
            browsers = try await BenchBrowsers.open(count: count, port: frontendPort, filter: "bench/#")
            // The retained state each is handed on subscribing is not the window's.
            try await Task.sleep(for: .seconds(1))
        }
        let browsersAtStart = browsers?.snapshot

        var cpu = CPUWindow()
        var processes: [String: Int32] = [spec.carrier.rawValue: carrier.pid, "dbus-daemon": bus.pid, "bench": getpid()]
        if let pid = broker.pid { processes["mosquitto"] = pid }
        let dropsAtStart = SimulatorCounters.notificationsDroppedOnFullSockets.load(ordering: .relaxed)
        let recordsAtStart = records.total
        let windowStart = ContinuousClock.now
        let memoryAtStart = ProcessStatistics.read(pid: carrier.pid)
        cpu.begin(processes)
        let threadsAtStart = ThreadCounters.read(pid: carrier.pid)
        let proxyLoopsAtStart = spec.radios.map { _ in BenchProxies.loopThreads() }
        let floor = subscriber.beginWindow(floor: ledger.sentCounters)
        let series = try await Self.watch(pid: carrier.pid, for: spec.seconds, every: spec.sampleEvery, log: log)
        let ceiling = subscriber.endReceipts(ceiling: ledger.sentCounters)
        let browsersAtEnd = browsers?.snapshot
        let socketDrops = SimulatorCounters.notificationsDroppedOnFullSockets.load(ordering: .relaxed) - dropsAtStart
        let window = (ContinuousClock.now - windowStart).seconds
        let recordsAtEnd = records.total
        let cpuPercent = cpu.end()
        let threads = ThreadCounters.read(pid: carrier.pid).since(threadsAtStart)
        let proxyLoops = proxyLoopsAtStart.map { BenchProxies.loopThreads().since($0) }
        let memory = ProcessStatistics.read(pid: carrier.pid)
        let anonymousGrowth = Double((memory?.residentAnonymousBytes ?? 0) - (memoryAtStart?.residentAnonymousBytes ?? 0))
            / 1_048_576 / window * 60
        // Drain: samples of the window still on their way (a batch window, queues).
        try await Task.sleep(for: .milliseconds(max(1000, spec.batchMilliseconds + 500)))
        let tally = subscriber.snapshot()
        // On an error before this, the browsers' sockets end with the gateway.
        await browsers?.close()

        let sent = zip(ceiling, floor).reduce(UInt64(0)) { $0 + ($1.0 - $1.1) }
        let lost = sent > tally.windowSamplesReceived ? sent - tally.windowSamplesReceived : 0
        var notes: [String] = []
        if !carrier.isRunning { notes.append("\(spec.carrier.rawValue) exited during the window") }
        if anonymousGrowth > 1 {
            notes.append("anonymous memory grew \(ReportTable.format(anonymousGrowth, 1)) MiB/min during the window (a leak, or a queue falling behind)")
        }
        if socketDrops > 0 {
            notes.append("the simulator dropped \(socketDrops) notifications on full AcquireNotify sockets (the carrier did not read within the kernel's queue)")
        }
        let heartRateSent = Double(sent) / window
        if workload.straps > 0 && heartRateSent < 0.95 * workload.heartRateOffered {
            notes.append("the simulator sent \(Int(heartRateSent)) of \(Int(workload.heartRateOffered)) heart-rate samples/s offered")
        }
        var browserMessagesPerSecond: Double?
        if let browsersAtStart, let browsersAtEnd {
            browserMessagesPerSecond = Double(zip(browsersAtEnd, browsersAtStart).reduce(0) { $0 + $1.0.messages - $1.1.messages }) / window
            if browsersAtEnd.contains(where: { $0.frames == 0 }) { notes.append("a browser received no frame") }
        }
        let latency = tally.latency
        func milliseconds(_ micros: UInt64) -> Double { Double(micros) / 1000 }
        return RunResult(
            purpose: spec.purpose, carrier: spec.carrier.rawValue, method: spec.method, batchMs: spec.batchMilliseconds,
            workload: workload, devices: workload.deviceCount, windowSeconds: window, warmUpSeconds: warmUp.seconds,
            offeredSamplesPerSecond: workload.offeredSamplesPerSecond,
            heartRateSentPerSecond: heartRateSent,
            heartRateDeliveredPerSecond: Double(tally.heartRateSamples) / window,
            boseRecordsSentPerSecond: Double(recordsAtEnd - recordsAtStart) / window,
            boseSamplesDeliveredPerSecond: Double(tally.boseSamples) / window,
            samplesPerSecond: Double(tally.heartRateSamples + tally.boseSamples) / window,
            messagesPerSecond: Double(tally.messages) / window,
            lost: lost, lostPercent: sent > 0 ? Double(lost) / Double(sent) * 100 : 0, sentInWindow: sent,
            unmatched: tally.unmatched, outOfOrder: tally.outOfOrder,
            latency: LatencySummary(
                samples: latency.totalCount,
                p50Ms: milliseconds(latency.valueAtPercentile(50)), p90Ms: milliseconds(latency.valueAtPercentile(90)),
                p99Ms: milliseconds(latency.valueAtPercentile(99)),
                p999Ms: milliseconds(latency.valueAtPercentile(99.9)), maxMs: milliseconds(latency.max),
                meanMs: latency.totalCount > 0 ? latency.mean / 1000 : 0),
            cpuPercent: cpuPercent,
            peakRSSMiB: Double(memory?.peakResidentBytes ?? 0) / 1_048_576,
            rssMiB: Double(memory?.residentBytes ?? 0) / 1_048_576,
            rssAnonymousMiB: Double(memory?.residentAnonymousBytes ?? 0) / 1_048_576,
            rssFileMiB: Double(memory?.residentFileBytes ?? 0) / 1_048_576,
            anonymousGrowthMiBPerMinute: anonymousGrowth,
            carrierThreads: threads,
            series: series,
            browsersOpen: spec.browsers, browserMessagesPerSecond: browserMessagesPerSecond,
            browserDropped: browsersAtEnd?.reduce(0) { $0 + $1.dropped },
            radios: spec.radios, proxyLoops: proxyLoops,
            notes: notes)
    }

    /// Waits out the window; with `interval`, reads the process's memory and CPU every `interval` seconds.
    static func watch(pid: Int32, for seconds: Double, every interval: Double?, log: (String) -> Void) async throws -> [WindowPoint]? {
        guard let interval else {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            return nil
        }
        let start = ContinuousClock.now
        var points: [WindowPoint] = []
        var previous = (at: start, cpu: ProcessStatistics.read(pid: pid)?.cpuSeconds ?? 0)
        while (ContinuousClock.now - start).seconds < seconds {
            let next = start + .milliseconds(Int((Double(points.count + 1) * interval).rounded() * 1000))
            try await Task.sleep(until: min(next, start + .milliseconds(Int(seconds * 1000))), clock: .continuous)
            guard let statistics = ProcessStatistics.read(pid: pid) else { break }
            let now = ContinuousClock.now
            let cpu = (statistics.cpuSeconds - previous.cpu) / max(0.001, (now - previous.at).seconds) * 100
            previous = (now, statistics.cpuSeconds)
            points.append(WindowPoint(seconds: (now - start).seconds, rssMiB: Double(statistics.residentBytes) / 1_048_576,
                                      anonymousMiB: Double(statistics.residentAnonymousBytes) / 1_048_576, cpuPercent: cpu))
            if points.count % 30 == 0 {
                log("    \(Int((now - start).seconds)) s: VmRSS \(ReportTable.format(points.last!.rssMiB, 1)) MiB, CPU \(ReportTable.format(cpu, 1)) %")
            }
        }
        return points
    }

    // MARK: The carriers

    /// The environment the systemd unit (`deploy/wear2mqtt.service`) gives the gateway, so the bench measures it
    /// as deployed: glibc's malloc capped at two arenas.
    static var deployedEnvironment: [String: String] {
        ProcessInfo.processInfo.environment.merging(["MALLOC_ARENA_MAX": "2"]) { _, deployed in deployed }
    }

    private func startCarrier(_ spec: RunSpec, bus: String, directory: TemporaryDirectory, frontendPort: Int?,
                              proxies: BenchProxies?) throws -> ChildProcess {
        switch spec.carrier {
        case .gateway:
            let configuration = try gatewayConfiguration(spec, bus: bus, directory: directory, frontendPort: frontendPort,
                                                         proxies: proxies)
            let (executable, arguments) = Self.held(to: spec.cpu, BuildProducts.gatewayExecutable, ["run", "--config", configuration])
            return try ChildProcess(executable: executable, arguments: arguments,
                                    environment: Self.deployedEnvironment,
                                    outputPath: directory.file("gateway.out"), errorPath: directory.file("gateway.err"))
        case .relay:
            guard proxies == nil else { throw BenchError("the raw relay reads BlueZ only: no run through proxies") }
            let addresses = (0..<spec.workload.straps).map(Workload.strapAddress).joined(separator: ",")
            let (executable, arguments) = Self.held(to: spec.cpu, BuildProducts.benchExecutable, [
                "relay", "--bus", bus, "--port", String(broker.port), "--method", spec.method, "--devices", addresses,
                "--spool-directory", directory.file("relay-spool"), "--coalesce-ms", String(coalesceMilliseconds),
            ])
            return try ChildProcess(executable: executable, arguments: arguments,
                                    outputPath: directory.file("relay.out"), errorPath: directory.file("relay.err"))
        case .floor:
            guard proxies == nil else { throw BenchError("the floor relay reads BlueZ only: no run through proxies") }
            let addresses = (0..<spec.workload.straps).map(Workload.strapAddress).joined(separator: ",")
            let (executable, arguments) = Self.held(to: spec.cpu, BuildProducts.benchExecutable, [
                "floor-relay", "--bus", bus, "--port", String(broker.port), "--method", spec.method, "--devices", addresses,
                "--coalesce-ms", String(coalesceMilliseconds),
            ])
            return try ChildProcess(executable: executable, arguments: arguments,
                                    outputPath: directory.file("floor.out"), errorPath: directory.file("floor.err"))
        case .peer:
            guard let peer else { throw BenchError("a Python peer run without a Python peer (PythonPeer.locate)") }
            guard proxies == nil else { throw BenchError("the Python peer reads BlueZ only: no run through proxies") }
            return try peer.start(bus: bus, port: broker.port, method: spec.method, straps: spec.workload.straps,
                                  directory: directory)
        }
    }

    /// A loopback port nothing listens on now, for the gateway's web interface.
    static func freeLoopbackPort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw BenchError("socket: errno \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw BenchError("bind: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// The command that runs `executable` held to `cpu`: through `taskset`, which sets the affinity and execs it,
    /// so the pid is the carrier's and every thread it makes inherits the one CPU.
    static func held(to cpu: Int?, _ executable: String, _ arguments: [String]) -> (String, [String]) {
        guard let cpu else { return (executable, arguments) }
        return ("/usr/bin/taskset", ["--cpu-list", String(cpu), executable] + arguments)
    }

    /// config.yaml for the run; `batch_ms` and `notify` are device options, which config.yaml does not take:
    /// they go into the device store (`state_dir/devices.json`), where `device/options` over MQTT would have put
    /// them, so the devices connect once, already with their options.
    private func gatewayConfiguration(_ spec: RunSpec, bus: String, directory: TemporaryDirectory, frontendPort: Int?,
                                      proxies: BenchProxies?) throws -> String {
        let workload = spec.workload
        let stateDirectory = directory.file("state")
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        var options = DeviceOptions()
        options.batchMilliseconds = spec.batchMilliseconds
        options.notify = spec.method
        let sensors = workload.boseSensorNames.map { "\($0): {period_ms: 20}" }.joined(separator: ", ")
        var lines = [
            "gateway: {id: bench, state_dir: \"\(stateDirectory)\", log_level: warning}",
            "mqtt: {host: 127.0.0.1, port: \(broker.port), base_topic: bench, client_id: wear2mqtt-bench-gateway, "
                + "coalesce_ms: \(coalesceMilliseconds)}",
            "bluez: {bus: \"\(bus)\"}",
        ]
        if let frontendPort { lines.append("frontend: {enabled: true, listen: \"127.0.0.1:\(frontendPort)\"}") }
        if let proxies { lines += proxies.configuration }
        lines.append("devices:")
        var stored: [ManagedDevice] = []
        for index in 0..<workload.straps {
            let id = Workload.strapID(index)
            lines.append("  - {address: \"\(Workload.strapAddress(index))\", name: \(id), driver: standard}")
            stored.append(ManagedDevice(id: id, address: Workload.strapAddress(index), driver: "standard", name: id,
                                        options: options, fromConfiguration: true))
        }
        for index in 0..<workload.bose {
            let id = Workload.boseID(index)
            lines.append("  - {address: \"\(Workload.boseAddress(index))\", name: \(id), driver: bose, configure: {sensors: {\(sensors)}}}")
            stored.append(ManagedDevice(id: id, address: Workload.boseAddress(index), driver: "bose", name: id,
                                        options: options, fromConfiguration: true))
        }
        if stored.isEmpty { lines[lines.count - 1] = "devices: []" }
        try DeviceStore(stateDirectory: stateDirectory).save(stored)
        return try directory.write("config.yaml", lines.joined(separator: "\n") + "\n")
    }
}
