import Foundation

/// `--profile soak` (issue 24): 50 simulated devices at their own rates — 40 heart-rate sensors at 64 Hz (the E4's
/// BVP rate) and 10 Bose Frames streaming two IMU sensors at 50 Hz, the rss run's mix — through the gateway for
/// `--seconds` (an hour by default), the gateway's memory and CPU read every 10 s. Not in CI: it takes the hour.
enum SoakProfile {
    static let defaultSeconds = 3_600.0
    static let interval = 10.0
    /// Memory settles (allocator arenas, the spool's segment, the broker's buffers) in the first minutes; flatness
    /// is judged after this.
    static let warmUpSeconds = 300.0
    static let workload = Workload(straps: 40, rateHz: 64, bose: 10, boseSensors: 2)

    static func plan(seconds: Double) -> [RunSpec] {
        [RunSpec(purpose: "soak", carrier: .gateway, method: "acquire", batchMilliseconds: 0, workload: workload,
                 seconds: seconds, sampleEvery: interval)]
    }

    /// RSS flat within 2 MB after warm-up and nothing lost (issue 24's soak targets).
    static func targets(_ results: [RunResult]) -> [BenchReport.TargetCheck] {
        guard let run = results.first(where: { $0.purpose == "soak" }), let series = run.series, !series.isEmpty else { return [] }
        let settled = series.filter { $0.seconds >= min(warmUpSeconds, run.windowSeconds / 2) }
        let rss = settled.map(\.rssMiB)
        let spread = ((rss.max() ?? 0) - (rss.min() ?? 0)) * 1.048576
        let format = ReportTable.format
        let cpu = series.map(\.cpuPercent)
        return [
            BenchReport.TargetCheck(
                target: "RSS flat within 2 MB after warm-up (\(Int(warmUpSeconds)) s), sampled every \(Int(interval)) s",
                measured: "VmRSS \(format(rss.min() ?? 0, 1))–\(format(rss.max() ?? 0, 1)) MiB over \(settled.count) samples: "
                    + "spread \(format(spread, 2)) MB; CPU \(format(cpu.min() ?? 0, 1))–\(format(cpu.max() ?? 0, 1)) % of a core",
                met: spread <= 2),
            BenchReport.TargetCheck(
                target: "0 samples lost over the soak",
                measured: "\(run.lost) lost of \(run.sentInWindow) sent in \(format(run.windowSeconds / 60, 1)) min",
                met: run.lost == 0),
        ]
    }
}

/// One reading of the gateway during a long window.
struct WindowPoint: Codable, Sendable {
    /// Since the window began.
    var seconds: Double
    var rssMiB: Double
    var anonymousMiB: Double
    /// Of one core, since the previous reading.
    var cpuPercent: Double
}
