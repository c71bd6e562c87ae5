/// `--profile radios` (issue 42): the gateway carrying heart-rate sensors through simulated ESPHome Bluetooth proxies
/// (`BenchProxies`: ESPHome's native API over loopback TCP, plaintext or Noise) against the local adapter's simulator.
///
/// - cost: 3 sensors (one proxy's slots) at 50 and 250 Hz, once through the local adapter and once through one proxy
///   (at 250 Hz also an encrypted one): the gateway's CPU per delivered sample on each path and the ratio.
/// - scale: N proxies (`--proxies`, 1, 2, 4, 8 by default) with 3 sensors each at 50 Hz; at 4 proxies also encrypted;
///   and the largest N's sensors through the local adapter for reference.
///
/// It measures what the gateway spends per sample and how far one gateway carries proxies on this machine, not an
/// ESP32: a real proxy's radio, WiFi and its 3 slots are not simulated beyond the slot count.
enum RadiosProfile {
    static let costRates: [Double] = [50, 250]
    static let strapsPerProxy = 3
    static let scaleRate = 50.0
    static let defaultProxyCounts = [1, 2, 4, 8]
    static let encryptedScaleCount = 4

    /// `seconds` is the window of every run but the 50 Hz cost runs, which get twice as long (150 samples/s make
    /// few 10 ms ticks of utime + stime).
    static func plan(seconds: Double, proxyCounts: [Int]) -> [RunSpec] {
        var specs: [RunSpec] = []
        func add(_ purpose: String, _ workload: Workload, _ window: Double, _ radios: ProxyRadios?) {
            specs.append(RunSpec(purpose: purpose, carrier: .gateway, method: "acquire", batchMilliseconds: 0,
                                 workload: workload, seconds: window, radios: radios))
        }
        for rate in costRates {
            let workload = Workload(straps: strapsPerProxy, rateHz: rate, bose: 0, boseSensors: 2)
            let window = rate < 100 ? 2 * seconds : seconds
            add("cost", workload, window, nil)
            add("cost", workload, window, ProxyRadios(count: 1, encrypted: false))
            if rate == costRates.last { add("cost", workload, window, ProxyRadios(count: 1, encrypted: true)) }
        }
        func scale(_ count: Int) -> Workload {
            Workload(straps: strapsPerProxy * count, rateHz: scaleRate, bose: 0, boseSensors: 2)
        }
        for count in proxyCounts {
            let radios = ProxyRadios(count: count, encrypted: false)
            // One proxy's three sensors at 50 Hz are the cost part's run already.
            if specs.contains(where: { $0.radios == radios && $0.workload == scale(count) }) { continue }
            add("scale", scale(count), seconds, radios)
        }
        if proxyCounts.contains(encryptedScaleCount) {
            add("scale", scale(encryptedScaleCount), seconds, ProxyRadios(count: encryptedScaleCount, encrypted: true))
        }
        if let largest = proxyCounts.max() { add("scale", scale(largest), seconds, nil) }
        return specs
    }

    /// One row of the report per run, as written to the JSON report.
    struct RadioCost: Codable, Sendable {
        var purpose: String
        /// "local adapter", or the proxies' summary ("4 proxies noise").
        var path: String
        var radios: ProxyRadios?
        var workload: Workload
        var offeredSamplesPerSecond: Double
        var samplesPerSecond: Double
        var lost: UInt64
        var sentInWindow: UInt64
        /// The gateway: utime + stime over the window, % of one core, and per delivered sample; its threads'
        /// schedstat run time per delivered sample (ns resolution).
        var gatewayCPUPercent: Double
        var gatewayMicrosecondsPerSample: Double?
        var gatewayRuntimeMicrosecondsPerSample: Double?
        /// The gateway's VmRSS at the end of the window and its VmHWM, MiB.
        var rssMiB: Double
        var peakRSSMiB: Double
        /// The simulated proxies' event loop threads (in the bench process): % of one core, µs per delivered sample.
        var proxyLoopPercent: Double?
        var proxyLoopMicrosecondsPerSample: Double?
        /// The bench process (simulators, proxies, subscriber), % of one core.
        var benchCPUPercent: Double
        var p50Ms: Double
        var p99Ms: Double
        /// From the gateway's start until every sensor delivered: how long connecting through the path took.
        var warmUpSeconds: Double
        /// Through proxies: the gateway's run time per sample ÷ the local adapter's with the same sensors and rate.
        var proxyToLocal: Double?

        init(_ run: RunResult) {
            purpose = run.purpose
            path = run.radios.map(\.summary) ?? "local adapter"
            radios = run.radios
            workload = run.workload
            offeredSamplesPerSecond = run.offeredSamplesPerSecond
            samplesPerSecond = run.samplesPerSecond
            lost = run.lost
            sentInWindow = run.sentInWindow
            gatewayCPUPercent = run.carrierCPU
            rssMiB = run.rssMiB
            peakRSSMiB = run.peakRSSMiB
            benchCPUPercent = run.cpuPercent["bench"] ?? 0
            p50Ms = run.latency.p50Ms
            p99Ms = run.latency.p99Ms
            warmUpSeconds = run.warmUpSeconds
            let cost = SampleCost(run)
            gatewayMicrosecondsPerSample = cost.cpuMicrosecondsPerSample
            gatewayRuntimeMicrosecondsPerSample = cost.runtimeMicrosecondsPerSample
            let window = max(run.windowSeconds, 1e-9)
            if let loops = run.proxyLoops {
                proxyLoopPercent = Double(loops.runtimeNanoseconds) / 1e9 / window * 100
                let samples = run.samplesPerSecond * window
                proxyLoopMicrosecondsPerSample = samples >= 1 ? Double(loops.runtimeNanoseconds) / 1000 / samples : nil
            }
        }
    }

    static func costs(_ results: [RunResult]) -> [RadioCost] {
        let rows = results.map(RadioCost.init)
        return rows.map { row in
            guard row.radios != nil,
                  let local = rows.first(where: { $0.radios == nil && $0.workload == row.workload }),
                  let mine = row.gatewayRuntimeMicrosecondsPerSample, let theirs = local.gatewayRuntimeMicrosecondsPerSample,
                  theirs > 0 else { return row }
            var compared = row
            compared.proxyToLocal = mine / theirs
            return compared
        }
    }

    static func targets(_ costs: [RadioCost]) -> [BenchReport.TargetCheck] {
        let through = costs.filter { $0.radios != nil }
        guard !through.isEmpty else { return [] }
        let lost = through.reduce(UInt64(0)) { $0 + $1.lost }
        let sent = through.reduce(UInt64(0)) { $0 + $1.sentInWindow }
        return [BenchReport.TargetCheck(
            target: "no sample lost through the proxies",
            measured: "\(lost) lost of \(sent) sent in \(through.count) runs through proxies", met: lost == 0)]
    }

    static func render(_ costs: [RadioCost]) -> [String] {
        let format = ReportTable.format
        let pad = ReportTable.pad
        let rpad = ReportTable.rpad
        func optional(_ value: Double?, _ decimals: Int) -> String { value.map { format($0, decimals) } ?? "—" }
        var lines = ["", "through one proxy against the local adapter (gateway CPU per delivered sample: utime + stime, and its "
                     + "threads' schedstat run time; proxy loop: the simulated proxy's thread in the bench process):"]
        lines.append([pad("devices", 14), pad("path", 16), rpad("samples/s", 9), rpad("lost", 5), rpad("gw CPU %", 8),
                      rpad("µs/sample", 9), rpad("runtime µs", 10), rpad("÷ local", 7), rpad("proxy µs", 8), rpad("p50 ms", 7),
                      rpad("p99 ms", 7), rpad("warm-up s", 9)].joined(separator: " "))
        for row in costs where row.purpose == "cost" {
            lines.append([pad(row.workload.summary, 14), pad(row.path, 16), rpad(format(row.samplesPerSecond, 0), 9),
                          rpad(String(row.lost), 5), rpad(format(row.gatewayCPUPercent, 2), 8),
                          rpad(optional(row.gatewayMicrosecondsPerSample, 1), 9),
                          rpad(optional(row.gatewayRuntimeMicrosecondsPerSample, 1), 10),
                          rpad(row.proxyToLocal.map { format($0, 2) + "×" } ?? "", 7),
                          rpad(optional(row.proxyLoopMicrosecondsPerSample, 1), 8), rpad(format(row.p50Ms, 2), 7),
                          rpad(format(row.p99Ms, 2), 7), rpad(format(row.warmUpSeconds, 1), 9)].joined(separator: " "))
        }
        lines.append("")
        lines.append("one gateway over N proxies, \(strapsPerProxy) sensors each at \(Workload.format(scaleRate)) Hz "
                     + "(and the largest N's sensors on the local adapter):")
        lines.append([pad("path", 17), rpad("devices", 7), rpad("offered/s", 9), rpad("samples/s", 9), rpad("lost", 5),
                      rpad("gw CPU %", 8), rpad("runtime µs", 10), rpad("RSS MiB", 7), rpad("peak MiB", 8),
                      rpad("proxies %", 9), rpad("bench %", 7), rpad("p99 ms", 7), rpad("warm-up s", 9)].joined(separator: " "))
        let scale = costs.filter { $0.workload.rateHz == scaleRate && ($0.purpose == "scale" || $0.radios != nil) }
            .sorted { order($0) < order($1) }
        func order(_ row: RadioCost) -> (Int, Int) { (row.radios?.count ?? .max, row.radios?.encrypted == true ? 1 : 0) }
        for row in scale {
            lines.append([pad(row.path, 17), rpad(String(row.workload.straps), 7), rpad(format(row.offeredSamplesPerSecond, 0), 9),
                          rpad(format(row.samplesPerSecond, 0), 9), rpad(String(row.lost), 5),
                          rpad(format(row.gatewayCPUPercent, 1), 8), rpad(optional(row.gatewayRuntimeMicrosecondsPerSample, 1), 10),
                          rpad(format(row.rssMiB, 1), 7), rpad(format(row.peakRSSMiB, 1), 8),
                          rpad(optional(row.proxyLoopPercent, 1), 9), rpad(format(row.benchCPUPercent, 0), 7),
                          rpad(format(row.p99Ms, 2), 7), rpad(format(row.warmUpSeconds, 1), 9)].joined(separator: " "))
        }
        lines.append("÷ local: the gateway's run time per sample through the proxy ÷ through the local adapter (same sensors,")
        lines.append("same rate). The proxy path is ESPHome's API on loopback TCP (protobuf frames, Noise with \"noise\"), the")
        lines.append("proxy's advertisements included; the simulated proxies run in the bench process (\"proxies %\", \"proxy µs\").")
        lines.append("warm-up s: from the gateway's start until every sensor delivered a sample.")
        return lines
    }
}
