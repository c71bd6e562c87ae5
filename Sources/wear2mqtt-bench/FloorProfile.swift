/// `--profile floor` (issue 43): what a sample costs the gateway against the least any bridge can spend — the
/// batched floor relay (`floor-relay`: one read per ready source, one write of every PUBLISH per wake-up) — and
/// against the raw relay (one notification at a time) and the Python peer, on the same simulator, bus and broker, at
/// 1,000, 5,000 and 20,000 samples/s with each notify method.
enum FloorProfile {
    /// 20 × 50 Hz, 20 × 250 Hz, 40 × 500 Hz.
    static let loads = [Workload(straps: 20, rateHz: 50, bose: 0, boseSensors: 2),
                        Workload(straps: 20, rateHz: 250, bose: 0, boseSensors: 2),
                        Workload(straps: 40, rateHz: 500, bose: 0, boseSensors: 2)]

    static func plan(seconds: Double, methods: [String]) -> [RunSpec] {
        var specs: [RunSpec] = []
        for (index, load) in loads.enumerated() {
            for method in methods {
                // The Python peer cannot carry the higher loads; at 1,000/s it is the comparison.
                let carriers: [RunSpec.Carrier] = index == 0 ? [.floor, .relay, .gateway, .peer] : [.floor, .relay, .gateway]
                for carrier in carriers {
                    specs.append(RunSpec(purpose: "floor", carrier: carrier, method: method, batchMilliseconds: 0,
                                         workload: load, seconds: seconds))
                }
            }
        }
        return specs
    }

    /// One row per run: µs per sample, each carrier's ratio to the floor at the same load and method, the peer's to
    /// the gateway.
    static func costs(_ results: [RunResult]) -> [SampleCost] {
        let rows = results.map(SampleCost.init)
        return rows.map { row in
            var compared = row
            if let floor = FloorProfile.row(.floor, like: row, in: rows), let mine = row.cpuMicrosecondsPerSample,
               let least = floor.cpuMicrosecondsPerSample, least > 0, row.carrier != RunSpec.Carrier.floor.rawValue {
                compared.toFloor = mine / least
            }
            if row.carrier == RunSpec.Carrier.peer.rawValue, let gateway = FloorProfile.row(.gateway, like: row, in: rows),
               let mine = row.cpuMicrosecondsPerSample, let theirs = gateway.cpuMicrosecondsPerSample, theirs > 0 {
                compared.peerToGateway = mine / theirs
                compared.comparedWith = gateway.run
            }
            return compared
        }
    }

    private static func row(_ carrier: RunSpec.Carrier, like other: SampleCost, in rows: [SampleCost]) -> SampleCost? {
        rows.first { $0.carrier == carrier.rawValue && $0.isComparable(to: other) }
    }

    /// Issue 43's targets, each from this run's figures.
    static func targets(_ costs: [SampleCost], _ results: [RunResult]) -> [BenchReport.TargetCheck] {
        let format = ReportTable.format
        var checks: [BenchReport.TargetCheck] = []
        func cost(_ carrier: RunSpec.Carrier, _ method: String, _ load: Workload) -> SampleCost? {
            costs.first { $0.carrier == carrier.rawValue && $0.method == method && $0.workload.straps == load.straps
                && $0.workload.rateHz == load.rateHz }
        }
        let methods = Array(Set(costs.map(\.method))).sorted()
        for method in methods {
            for (load, limit) in [(loads[0], 10.0), (loads[2], 5.0)] {
                if let run = cost(.gateway, method, load), let microseconds = run.cpuMicrosecondsPerSample {
                    checks.append(.init(target: "gateway ≤ \(format(limit, 0)) µs per sample at \(format(load.heartRateOffered, 0)) samples/s (\(method))",
                                        measured: "\(format(microseconds, 1)) µs at \(format(run.samplesPerSecond, 0)) samples/s",
                                        met: microseconds <= limit))
                }
            }
            for load in loads {
                if let run = cost(.gateway, method, load), let ratio = run.toFloor {
                    checks.append(.init(target: "gateway within 1.5× the floor at \(format(load.heartRateOffered, 0)) samples/s (\(method))",
                                        measured: "\(format(ratio, 2))×", met: ratio <= 1.5))
                }
            }
            if let peer = cost(.peer, method, loads[0]), let ratio = peer.peerToGateway {
                checks.append(.init(target: "≥ 10× less CPU per sample than the Python peer at 1,000 samples/s (\(method))",
                                    measured: "peer ÷ gateway \(format(ratio, 1))×", met: ratio >= 10))
            }
        }
        for load in loads {
            if let start = cost(.gateway, "start_notify", load)?.cpuMicrosecondsPerSample,
               let acquire = cost(.gateway, "acquire", load)?.cpuMicrosecondsPerSample, acquire > 0 {
                checks.append(.init(target: "StartNotify within 1.5× AcquireNotify at \(format(load.heartRateOffered, 0)) samples/s",
                                    measured: "\(format(start / acquire, 2))× (\(format(start, 1)) vs \(format(acquire, 1)) µs)",
                                    met: start / acquire <= 1.5))
            }
        }
        for run in results where run.carrier == RunSpec.Carrier.gateway.rawValue && run.workload.rateHz == loads[1].rateHz
            && run.workload.straps == loads[1].straps {
            checks.append(.init(target: "gateway p99 < 5 ms at 5,000 samples/s (\(run.method))",
                                measured: "p99 \(format(run.latency.p99Ms, 2)) ms", met: run.latency.p99Ms < 5))
        }
        let gatewayRuns = results.filter { $0.carrier == RunSpec.Carrier.gateway.rawValue }
        let lost = gatewayRuns.reduce(UInt64(0)) { $0 + $1.lost }
        checks.append(.init(target: "nothing lost by the gateway", measured: "\(lost) lost in \(gatewayRuns.count) runs", met: lost == 0))
        return checks
    }
}
