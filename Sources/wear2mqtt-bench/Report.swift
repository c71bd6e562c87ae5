#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Everything one benchmark invocation measured, as written to `--json`.
struct BenchReport: Codable, Sendable {
    var command: String
    var profile: String
    /// mosquitto's `set_tcp_nodelay` (true unless `--broker-nagle`).
    var brokerTCPNoDelay: Bool
    /// The carriers' coalescing window (`--coalesce-ms`, the gateway's `mqtt.coalesce_ms`).
    var coalesceMilliseconds: Int
    var build: String
    var date: String
    var machine: Machine
    var mosquitto: MosquittoBaselineResult?
    var runs: [RunResult]
    var ratios: [Ratio]
    var targets: [TargetCheck]
    /// `--profile realistic`: each run's cost per delivered sample, and the Python peer's against the gateway's.
    var costs: [SampleCost]?
    /// `--profile radios`: each run's gateway cost, through proxies or the local adapter, and the ratio of the two.
    var radios: [RadiosProfile.RadioCost]?
    var totalSeconds: Double
    /// `/proc/loadavg` (1, 5 and 15 minutes) when the first run started and after the last: the bench shares
    /// the machine with whatever else runs.
    var loadAverageAtStart: String?
    var loadAverageAtEnd: String?
    var caveats: [String]

    /// The first three fields of `/proc/loadavg`.
    static var loadAverage: String? {
        (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ")
    }

    struct Machine: Codable, Sendable {
        var cpu: String
        var cores: Int
        var memoryMiB: Int
        var kernel: String

        static var current: Machine {
            let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
            let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }?
                .split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown"
            let meminfo = (try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)) ?? ""
            let kilobytes = meminfo.split(separator: "\n").first { $0.hasPrefix("MemTotal:") }?
                .split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            var names = utsname()
            uname(&names)
            let release = withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            return Machine(cpu: model, cores: ProcessInfo.processInfo.activeProcessorCount, memoryMiB: kilobytes / 1024,
                           kernel: "Linux \(release)")
        }
    }

    /// A gateway figure divided by a baseline's.
    struct Ratio: Codable, Sendable {
        var gatewayRun: String
        var baseline: String
        /// Delivered samples per second, gateway ÷ baseline (the baseline's messages per second for mosquitto).
        var delivered: Double
        /// Samples per second per core of the carrier's own CPU, gateway ÷ relay: what each would carry at one
        /// full core if its cost per sample stayed the same. Relay baselines only.
        var perCore: Double?
    }

    struct TargetCheck: Codable, Sendable {
        var target: String
        var measured: String
        var met: Bool
    }
}

extension RunResult {
    var title: String {
        var text = "\(carrier) \(radios.map { "via " + $0.summary } ?? method)"
        if carrier == RunSpec.Carrier.gateway.rawValue && batchMs > 0 { text += " batch \(batchMs)" }
        return text
    }

    var carrierCPU: Double { cpuPercent[carrier] ?? 0 }

    /// Heart-rate samples per second per full core of the carrier.
    var samplesPerCore: Double? {
        carrierCPU > 0 ? heartRateDeliveredPerSecond / (carrierCPU / 100) : nil
    }
}

/// The human table on stdout.
enum ReportTable {
    static func render(_ report: BenchReport) -> String {
        var lines: [String] = []
        let machine = report.machine
        lines.append("wear2mqtt-bench (\(report.build) build, profile \(report.profile)) on \(machine.cpu), "
                     + "\(machine.cores) cores, \(machine.memoryMiB) MiB, \(machine.kernel); mosquitto "
                     + (report.brokerTCPNoDelay ? "set_tcp_nodelay true" : "with Nagle (set_tcp_nodelay false)")
                     + "; coalesce_ms \(report.coalesceMilliseconds)")
        if let flood = report.mosquitto {
            lines.append("")
            lines.append("mosquitto baseline: mosquitto_pub -l → broker → subscriber, QoS 0, \(flood.payloadBytes)-byte payloads: "
                         + "\(format(flood.messagesPerSecond, 0)) msg/s (\(flood.received)/\(flood.published) received in "
                         + "\(format(flood.seconds, 2)) s; mosquitto \(format(flood.cpuPercent["mosquitto"] ?? 0, 0)) %, "
                         + "subscriber \(format(flood.cpuPercent["bench"] ?? 0, 0)) % of a core)")
        }
        lines.append("")
        let header = [pad("purpose", 11), pad("run", 27), pad("devices", 30), rpad("offered/s", 9), rpad("sent/s", 8),
                      rpad("samples/s", 9), rpad("msg/s", 7), rpad("lost", 6), rpad("p50 ms", 7), rpad("p99 ms", 7),
                      rpad("p99.9 ms", 8), rpad("CPU %", 6), rpad("mosq %", 6), rpad("dbus %", 6), rpad("bench %", 7),
                      rpad("peak MiB", 8)]
        lines.append(header.joined(separator: " "))
        for run in report.runs {
            let row = [pad(run.purpose, 11), pad(run.title, 27), pad(run.workload.summary, 30),
                       rpad(format(run.offeredSamplesPerSecond, 0), 9),
                       rpad(format(run.heartRateSentPerSecond + run.boseRecordsSentPerSecond, 0), 8),
                       rpad(format(run.samplesPerSecond, 0), 9), rpad(format(run.messagesPerSecond, 0), 7),
                       rpad(String(run.lost), 6), rpad(format(run.latency.p50Ms, 2), 7), rpad(format(run.latency.p99Ms, 2), 7),
                       rpad(format(run.latency.p999Ms, 2), 8), rpad(format(run.carrierCPU, 0), 6),
                       rpad(format(run.cpuPercent["mosquitto"] ?? 0, 0), 6), rpad(format(run.cpuPercent["dbus-daemon"] ?? 0, 0), 6),
                       rpad(format(run.cpuPercent["bench"] ?? 0, 0), 7), rpad(format(run.peakRSSMiB, 1), 8)]
            lines.append(row.joined(separator: " "))
            for note in run.notes { lines.append("    note: \(note)") }
        }
        if !report.ratios.isEmpty {
            lines.append("")
            lines.append("ratios (gateway ÷ baseline):")
            for ratio in report.ratios {
                var text = "  \(ratio.gatewayRun) ÷ \(ratio.baseline): delivered \(percent(ratio.delivered))"
                if let perCore = ratio.perCore { text += ", per core \(percent(perCore))" }
                lines.append(text)
            }
        }
        if !report.targets.isEmpty {
            lines.append("")
            lines.append("targets:")
            for check in report.targets {
                lines.append("  [\(check.met ? "met" : "MISSED")] \(check.target): \(check.measured)")
            }
        }
        if let costs = report.costs { lines += RealisticProfile.render(costs) }
        if let radios = report.radios { lines += RadiosProfile.render(radios) }
        lines.append("")
        lines.append("CPU % is of one core over the window; \"bench\" is this process: the simulator (all devices) and the")
        lines.append("subscriber, on the same \(machine.cores) cores as what it measures. samples/s counts receipts during the")
        lines.append("window; lost counts heart-rate sequence numbers sent in the window that never arrived.")
        if let start = report.loadAverageAtStart, let end = report.loadAverageAtEnd {
            lines.append("load average (1, 5, 15 min): \(start) at the start, \(end) at the end")
        }
        for caveat in report.caveats { lines.append("caveat: \(caveat)") }
        lines.append("total \(format(report.totalSeconds, 0)) s")
        return lines.joined(separator: "\n")
    }

    static func format(_ value: Double, _ decimals: Int) -> String {
        String(format: "%.\(decimals)f", value)
    }

    static func percent(_ ratio: Double) -> String {
        ratio >= 0.1 ? format(ratio * 100, 1) + " %" : format(ratio * 100, 3) + " %"
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    static func rpad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }
}
