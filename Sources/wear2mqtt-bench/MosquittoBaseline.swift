#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Wear2MQTTTesting

/// Baseline (b): what the broker itself carries on this machine. `mosquitto_pub -l` publishes one QoS 0
/// message per line of a generated file as fast as it can; the bench's subscriber (the same one that measures
/// the gateway) counts them from the first receipt to the last.
struct MosquittoBaselineResult: Codable, Sendable {
    var published: Int
    var received: UInt64
    var payloadBytes: Int
    var topic: String
    var seconds: Double
    var messagesPerSecond: Double
    /// Broker and bench (subscriber) CPU time of the whole exchange over the time from the first receipt to the
    /// last, percent of one core (mosquitto_pub is gone by the time it could be read, so it is not listed).
    var cpuPercent: [String: Double]
}

enum MosquittoBaseline {
    static let topic = "flood/bench/sensor/heart_rate"

    static func run(broker: BenchBroker, messages: Int, payloadBytes: Int = 100) async throws -> MosquittoBaselineResult {
        let directory = try TemporaryDirectory(prefix: "wear2mqtt-bench-flood")
        ChildProcesses.shared.register(directory: directory.path)
        defer { directory.remove() }
        // A payload the size of a gateway heart-rate sample with its topic, digits varying like timestamps.
        let lines = (0..<messages).map { index -> String in
            let head = "{\"ts\":\(1_795_298_704_123 + index),\"bpm\":72,\"contact\":true,\"energy_kj\":\(index & 0xFFFF)"
            return head + String(repeating: " ", count: max(0, payloadBytes - head.count - 1)) + "}"
        }
        let input = try directory.write("messages.txt", lines.joined(separator: "\n") + "\n")

        let subscriber = try SampleSubscriber(port: broker.port, topics: ["flood/#"], ledger: nil, heartRateDevices: 0,
                                              boseDevices: 0)
        defer { subscriber.stop() }
        try await subscriber.waitUntilSubscribed()

        let publisher = Process()
        publisher.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_pub")
        publisher.arguments = ["-h", "127.0.0.1", "-p", String(broker.port), "-t", topic, "-q", "0", "-l"]
        publisher.standardInput = FileHandle(forReadingAtPath: input)
        publisher.standardOutput = FileHandle.nullDevice
        publisher.standardError = FileHandle.nullDevice
        var cpu = CPUWindow()
        var processes = ["bench": getpid()]
        if let pid = broker.pid { processes["mosquitto"] = pid }
        cpu.begin(processes)
        try publisher.run()
        ChildProcesses.shared.register(publisher.processIdentifier)
        defer { ChildProcesses.shared.unregister(publisher.processIdentifier) }

        // Until everything arrived, or nothing more arrived for a second after the publisher finished.
        var lastCount: UInt64 = 0
        var quietSince = ContinuousClock.now
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            let count = subscriber.snapshot().flood.count
            if count >= UInt64(messages) { break }
            if count != lastCount {
                lastCount = count
                quietSince = .now
            } else if !publisher.isRunning && ContinuousClock.now - quietSince > .seconds(1) {
                break
            }
        }
        if publisher.isRunning { publisher.terminate() }
        let flood = subscriber.snapshot().flood
        let seconds = Double(flood.last &- flood.first) / 1e9
        // CPU time spent while the flood lasted, over the time it lasted.
        let cpuPercent = cpu.end(over: seconds)
        return MosquittoBaselineResult(
            published: messages, received: flood.count, payloadBytes: payloadBytes, topic: topic, seconds: seconds,
            messagesPerSecond: seconds > 0 ? Double(flood.count - 1) / seconds : 0, cpuPercent: cpuPercent)
    }
}
