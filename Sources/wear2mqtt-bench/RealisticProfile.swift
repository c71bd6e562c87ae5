/// `--profile realistic` (issue 21): what a sample costs at the rates wearables really send, against the Python
/// bridge people write instead (bleak + paho-mqtt, `python/peer.py`), on the same simulator, bus and broker.
///
/// Runs: 20 heart-rate sensors at 1, 10, 50 and 250 Hz (20 to 5,000 samples/s); the 50 devices of the targets profile's rss run (40 × 64 Hz
/// + 10 Bose); 20 connected silent sensors. Each is carried by the gateway with AcquireNotify and by the peer
/// with AcquireNotify; at 20 × 50 Hz both also with StartNotify (bleak's default). The peer subscribes to heart
/// rate only, so in the mixed run it carries the 40 heart-rate sensors without the Bose glasses.
///
/// It measures cost per delivered sample, not throughput or latency limits (the targets profile does that).
enum RealisticProfile {
    static let rates: [Double] = [1, 10, 50, 250]
    static let startNotifyRate: Double = 50

    /// `seconds` is the window of the 10 and 50 Hz runs; the 1 Hz and idle runs use three times as long, as their
    /// CPU is a few 10 ms ticks of utime + stime.
    static func plan(seconds: Double) -> [RunSpec] {
        var specs: [RunSpec] = []
        func add(_ purpose: String, _ carrier: RunSpec.Carrier, _ method: String, _ workload: Workload, _ window: Double,
                 browsers: Int? = nil) {
            specs.append(RunSpec(purpose: purpose, carrier: carrier, method: method, batchMilliseconds: 0,
                                 workload: workload, seconds: window, browsers: browsers))
        }
        for rate in rates {
            let workload = Workload(straps: 20, rateHz: rate, bose: 0, boseSensors: 2)
            let window = rate < 10 ? 3 * seconds : seconds
            let methods = rate == startNotifyRate ? ["acquire", "start_notify"] : ["acquire"]
            for method in methods {
                add("realistic", .gateway, method, workload, window)
                add("realistic", .peer, method, workload, window)
            }
        }
        // The web interface (issue 40): the 20 × 50 Hz run again with it on and no browser, then with two browsers
        // each subscribed to every topic; compared with the realistic run above, which has it off.
        let browsing = Workload(straps: 20, rateHz: 50, bose: 0, boseSensors: 2)
        add("browsers", .gateway, "acquire", browsing, seconds, browsers: 0)
        add("browsers", .gateway, "acquire", browsing, seconds, browsers: 2)
        let mixed = Workload(straps: 40, rateHz: 64, bose: 10, boseSensors: 2)
        add("mixed", .gateway, "acquire", mixed, seconds)
        add("mixed", .peer, "acquire", mixed.strapsOnly, seconds)
        let idle = Workload(straps: 20, rateHz: 0, bose: 0, boseSensors: 2)
        add("idle", .gateway, "acquire", idle, 3 * seconds)
        add("idle", .peer, "acquire", idle, 3 * seconds)
        return specs
    }

    /// One row per run: the carrier's cost per delivered sample, and for the peer its cost ÷ the gateway's.
    static func costs(_ results: [RunResult]) -> [SampleCost] {
        let rows = results.map(SampleCost.init)
        return rows.map { row in
            guard row.carrier == RunSpec.Carrier.peer.rawValue,
                  let gateway = rows.first(where: { $0.carrier == RunSpec.Carrier.gateway.rawValue && row.isComparable(to: $0) })
            else { return row }
            var compared = row
            compared.comparedWith = gateway.run
            if row.purpose == "idle" {
                // A few ticks of utime + stime in the whole window: the run time is the figure that resolves it.
                compared.peerToGateway = gateway.runtimePercent > 0 ? row.runtimePercent / gateway.runtimePercent : nil
            } else if let mine = row.cpuMicrosecondsPerSample, let theirs = gateway.cpuMicrosecondsPerSample, theirs > 0 {
                compared.peerToGateway = mine / theirs
            }
            return compared
        }
    }

    /// Issue 21's targets at the rates wearables send, checked against this run's figures.
    static func targets(_ costs: [SampleCost]) -> [BenchReport.TargetCheck] {
        let format = ReportTable.format
        var checks: [BenchReport.TargetCheck] = []
        func gateway(_ purpose: String, rate: Double) -> SampleCost? {
            costs.first { $0.purpose == purpose && $0.carrier == RunSpec.Carrier.gateway.rawValue && $0.method == "acquire"
                && $0.workload.rateHz == rate }
        }
        func peer(comparedWith run: SampleCost) -> SampleCost? {
            costs.first { $0.carrier == RunSpec.Carrier.peer.rawValue && $0.comparedWith == run.run }
        }
        if let run = gateway("realistic", rate: 50), let cost = run.cpuMicrosecondsPerSample {
            checks.append(BenchReport.TargetCheck(
                target: "gateway CPU ≤ 10 µs per delivered sample at 1,000 samples/s from 20 devices",
                measured: "\(format(cost, 1)) µs (schedstat run time \(run.runtimeMicrosecondsPerSample.map { format($0, 1) } ?? "—") µs) "
                    + "at \(format(run.samplesPerSecond, 0)) samples/s", met: cost <= 10))
            if let switches = run.voluntaryContextSwitchesPerSample {
                checks.append(BenchReport.TargetCheck(
                    target: "≤ 1 voluntary context switch per notification at 1,000 samples/s",
                    measured: "\(format(switches, 2)) per sample", met: switches <= 1))
            }
        }
        for rate in [50.0, 250] {
            guard let run = gateway("realistic", rate: rate), let ratio = peer(comparedWith: run)?.peerToGateway else { continue }
            checks.append(BenchReport.TargetCheck(
                target: "≥ 10× less CPU per sample than the Python peer at \(format(rate * 20, 0)) samples/s",
                measured: "the peer spends \(format(ratio, 2))× the gateway's µs per sample", met: ratio >= 10))
        }
        if let off = gateway("realistic", rate: 50), let offCost = off.cpuMicrosecondsPerSample {
            let browsing = costs.filter { $0.purpose == "browsers" }
            for run in browsing {
                guard let cost = run.cpuMicrosecondsPerSample, let open = run.browsersOpen else { continue }
                let received = run.browserMessagesPerSecond.map { ", the browsers received \(format($0, 0)) messages/s" } ?? ""
                let dropped = run.browserDropped.map { $0 > 0 ? ", \($0) dropped for them" : ", none dropped" } ?? ""
                checks.append(BenchReport.TargetCheck(
                    target: open == 0 ? "gateway CPU per sample with the web interface on and no browser open (20 × 50 Hz)"
                        : "gateway CPU per sample with \(open) browsers open, each subscribed to every topic (20 × 50 Hz)",
                    measured: "\(format(cost, 1)) µs against \(format(offCost, 1)) µs with it off: "
                        + "\(format(cost / offCost, 2))×\(received)\(dropped)",
                    met: (run.browserDropped ?? 0) == 0))
            }
        }
        if let idle = costs.first(where: { $0.purpose == "idle" && $0.carrier == RunSpec.Carrier.gateway.rawValue }) {
            checks.append(BenchReport.TargetCheck(
                target: "idle with 20 connected, silent devices < 0.1 % of a core",
                measured: "\(format(idle.runtimePercent, 3)) % (schedstat run time; utime + stime \(format(idle.cpuPercent, 2)) %)",
                met: idle.runtimePercent < 0.1))
        }
        return checks
    }

    static func render(_ costs: [SampleCost]) -> [String] {
        let format = ReportTable.format
        let pad = ReportTable.pad
        let rpad = ReportTable.rpad
        func optional(_ value: Double?, _ decimals: Int) -> String { value.map { format($0, decimals) } ?? "—" }
        var lines = ["", "per delivered sample (the carrier process; CPU = utime + stime over the window, runtime = "
                     + "schedstat; context switches summed over its threads):"]
        let header = [pad("run", 27), pad("devices", 30), rpad("samples/s", 9), rpad("CPU %", 6), rpad("µs/sample", 9),
                      rpad("runtime µs", 10), rpad("vol cs", 7), rpad("invol cs", 8), rpad("threads", 7),
                      rpad("peer ÷ gw", 9), rpad("÷ floor", 8)]
        lines.append(header.joined(separator: " "))
        for cost in costs where cost.purpose != "idle" {
            let row = [pad(cost.title, 27), pad(cost.workload.summary, 30), rpad(format(cost.samplesPerSecond, 0), 9),
                       rpad(format(cost.cpuPercent, 1), 6), rpad(optional(cost.cpuMicrosecondsPerSample, 1), 9),
                       rpad(optional(cost.runtimeMicrosecondsPerSample, 1), 10),
                       rpad(optional(cost.voluntaryContextSwitchesPerSample, 2), 7),
                       rpad(optional(cost.involuntaryContextSwitchesPerSample, 2), 8), rpad(String(cost.threads), 7),
                       rpad(cost.peerToGateway.map { format($0, 2) + "×" } ?? "", 9),
                       rpad(cost.toFloor.map { format($0, 2) + "×" } ?? "", 8)]
            lines.append(row.joined(separator: " "))
        }
        let idle = costs.filter { $0.purpose == "idle" }
        if !idle.isEmpty {
            lines.append("")
            lines.append("idle (connected, silent):")
            for cost in idle {
                var text = "  \(cost.title), \(cost.workload.summary): CPU \(format(cost.cpuPercent, 2)) % of a core "
                    + "(runtime \(format(cost.runtimePercent, 2)) %), \(format(cost.voluntaryContextSwitchesPerSecond, 1)) voluntary "
                    + "and \(format(cost.involuntaryContextSwitchesPerSecond, 1)) involuntary context switches/s, \(cost.threads) threads"
                if let ratio = cost.peerToGateway { text += "; \(format(ratio, 2))× the gateway's run time" }
                lines.append(text)
            }
        }
        lines.append("peer ÷ gw: the Python peer's µs/sample ÷ the gateway's with the same notify method and heart-rate")
        lines.append("sensors (in the mixed run the gateway also carries the 10 Bose glasses, whose samples count in its µs/sample).")
        return lines
    }
}

/// What one run's carrier spent per delivered sample (per second when idle), as written to the JSON report.
struct SampleCost: Codable, Sendable {
    var purpose: String
    var carrier: String
    var method: String
    var workload: Workload
    var windowSeconds: Double
    var samplesPerSecond: Double
    /// utime + stime over the window, % of one core.
    var cpuPercent: Double
    /// The threads' schedstat run time over the window, % of one core (ns resolution; threads that ended during
    /// the window are missing).
    var runtimePercent: Double
    /// Nil when no sample was delivered (idle).
    var cpuMicrosecondsPerSample: Double?
    var runtimeMicrosecondsPerSample: Double?
    var voluntaryContextSwitchesPerSample: Double?
    var involuntaryContextSwitchesPerSample: Double?
    var voluntaryContextSwitchesPerSecond: Double
    var involuntaryContextSwitchesPerSecond: Double
    var threads: Int
    /// Python peer rows: its µs per sample ÷ the gateway's (when idle its run time ÷ the gateway's, as utime +
    /// stime are a few ticks there), and which gateway run that was.
    var peerToGateway: Double?
    var comparedWith: String?
    /// `--profile floor`: this carrier's µs per sample ÷ the floor relay's at the same load and notify method.
    var toFloor: Double?
    /// Runs with the web interface on: browsers open, what they received, what was dropped for them.
    var browsersOpen: Int?
    var browserMessagesPerSecond: Double?
    var browserDropped: Int?

    init(_ result: RunResult) {
        purpose = result.purpose
        carrier = result.carrier
        method = result.method
        workload = result.workload
        windowSeconds = result.windowSeconds
        samplesPerSecond = result.samplesPerSecond
        cpuPercent = result.carrierCPU
        browsersOpen = result.browsersOpen
        browserMessagesPerSecond = result.browserMessagesPerSecond
        browserDropped = result.browserDropped
        let threads = result.carrierThreads ?? ThreadActivity(threads: 0)
        let window = max(result.windowSeconds, 1e-9)
        runtimePercent = Double(threads.runtimeNanoseconds) / 1e9 / window * 100
        voluntaryContextSwitchesPerSecond = Double(threads.voluntaryContextSwitches) / window
        involuntaryContextSwitchesPerSecond = Double(threads.involuntaryContextSwitches) / window
        self.threads = threads.threads
        let samples = result.samplesPerSecond * window
        if samples >= 1 {
            cpuMicrosecondsPerSample = result.carrierCPU / 100 * window * 1e6 / samples
            runtimeMicrosecondsPerSample = Double(threads.runtimeNanoseconds) / 1000 / samples
            voluntaryContextSwitchesPerSample = Double(threads.voluntaryContextSwitches) / samples
            involuntaryContextSwitchesPerSample = Double(threads.involuntaryContextSwitches) / samples
        }
    }

    var title: String { "\(carrier) \(method)" + (browsersOpen.map { " web \($0) br" } ?? "") }
    var run: String { "\(title), \(workload.summary)" }

    /// The same heart-rate sensors, rate and notify method in the same part of the profile.
    func isComparable(to other: SampleCost) -> Bool {
        purpose == other.purpose && method == other.method && workload.straps == other.workload.straps
            && workload.rateHz == other.workload.rateHz
    }
}
