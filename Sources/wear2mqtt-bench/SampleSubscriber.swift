import CMosquitto
import Foundation
import Histogram
import Synchronization
import Wearables

/// The benchmark's subscriber: one libmosquitto client on its own network thread, subscribed to everything
/// the measured process publishes. Each message is stamped with `monotonicNanoseconds()` inside libmosquitto's
/// message callback, before any parsing, so the receipt instant does not wait for Swift's cooperative pool,
/// which the in-process simulator keeps busy. (The project's `MQTTClient` hands messages over through an
/// AsyncStream, whose consumer would be stamped only when a pool thread gets to it.)
///
/// It understands three kinds of topics:
/// - `bench/hrNNN/sensor/heart_rate` from the gateway: JSON with the sequence in `energy_kj` (one sample, or
///   `{"samples":[…]}` with many); `bench/imuNNN/sensor/<sensor>`: Bose samples, counted by their `"ts"` keys;
/// - `relay/<address>` from the raw relay: the Heart Rate Measurement bytes as the sensor sent them;
/// - `flood/…` from mosquitto_pub: counted, with the first and last receipt instant.
///
/// `@unchecked Sendable`: it wraps a libmosquitto handle, which after `start` only libmosquitto's own network
/// thread uses (`stop` calls the two functions libmosquitto allows from another thread); the tally is behind
/// a mutex.
final class SampleSubscriber: @unchecked Sendable {
    private let handle: OpaquePointer
    private let ledger: SendLedger?
    private let tally: Mutex<Tally>
    private let topics: [String]
    private let stopped = Mutex(false)

    init(port: Int, topics: [String], ledger: SendLedger?, heartRateDevices: Int, boseDevices: Int) throws {
        _ = mosquitto_lib_init()
        self.ledger = ledger
        self.topics = topics
        tally = Mutex(Tally(heartRateDevices: heartRateDevices, boseDevices: boseDevices))
        guard let handle = mosquitto_new("wear2mqtt-bench-\(getpid())-\(UUID().uuidString.prefix(6))", true, nil) else {
            throw BenchError("mosquitto_new failed")
        }
        self.handle = handle
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        mosquitto_message_callback_set(handle) { _, context, message in
            let receipt = monotonicNanoseconds()
            guard let context, let message else { return }
            let subscriber = Unmanaged<SampleSubscriber>.fromOpaque(context).takeUnretainedValue()
            let topic = String(cString: message.pointee.topic)
            let payload = UnsafeRawBufferPointer(start: message.pointee.payload, count: Int(message.pointee.payloadlen))
            subscriber.received(topic: topic, payload: payload, at: receipt)
        }
        mosquitto_subscribe_callback_set(handle) { _, context, _, _, _ in
            guard let context else { return }
            let subscriber = Unmanaged<SampleSubscriber>.fromOpaque(context).takeUnretainedValue()
            subscriber.tally.withLock { $0.acknowledgedSubscriptions += 1 }
        }
        let connected = mosquitto_connect(handle, "127.0.0.1", Int32(port), 60)
        guard connected == MOSQ_ERR_SUCCESS.rawValue else {
            mosquitto_destroy(handle)
            throw BenchError("the subscriber cannot connect to 127.0.0.1:\(port): \(String(cString: mosquitto_strerror(connected)))")
        }
        for topic in topics { mosquitto_subscribe(handle, nil, topic, 0) }
        guard mosquitto_loop_start(handle) == MOSQ_ERR_SUCCESS.rawValue else {
            mosquitto_destroy(handle)
            throw BenchError("mosquitto_loop_start failed")
        }
    }

    /// Waits until the broker acknowledged every subscription.
    func waitUntilSubscribed(timeout: Duration = .seconds(10)) async throws {
        let deadline = ContinuousClock.now + timeout
        while tally.withLock({ $0.acknowledgedSubscriptions }) < topics.count {
            guard ContinuousClock.now < deadline else { throw BenchError("the broker did not acknowledge the subscriptions") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Disconnects and joins the network thread; later calls do nothing. Must run before the subscriber is
    /// released, as the thread's callbacks hold an unretained reference (`deinit` does it otherwise).
    func stop() {
        let first = stopped.withLock { stopped in defer { stopped = true }; return !stopped }
        guard first else { return }
        mosquitto_disconnect(handle)
        mosquitto_loop_stop(handle, false)
        mosquitto_destroy(handle)
    }

    deinit { stop() }

    // MARK: Window control (from the bench's task)

    /// Whether every heart-rate and Bose device has delivered at least one sample.
    var everyDeviceSeen: (heartRate: Int, bose: Int) {
        tally.withLock { ($0.heartRateSeen.filter { $0 }.count, $0.boseSeen.filter { $0 }.count) }
    }

    /// Starts counting: samples with a counter above the floor (per device, what `sentCounters` answers) belong
    /// to the window, and receipts from now on count towards the delivered rate. The floor is taken under the
    /// tally's lock, so a sample is either counted in the window or older than it: a floor taken earlier let the
    /// samples sent and received in between count as lost (1–9 per run, for every carrier).
    func beginWindow(floor sentCounters: () -> [UInt64]) -> [UInt64] {
        tally.withLock { tally in
            let floor = sentCounters()
            tally.window = Tally.Window(floor: floor)
            tally.measuringReceipts = true
            return floor
        }
    }

    /// Ends the receipt window; samples up to `ceiling` still count towards loss and latency when they arrive later.
    /// The ceiling is taken under the tally's lock, for the same reason as the floor.
    func endReceipts(ceiling sentCounters: () -> [UInt64]) -> [UInt64] {
        tally.withLock { tally in
            let ceiling = sentCounters()
            tally.measuringReceipts = false
            tally.window?.ceiling = ceiling
            return ceiling
        }
    }

    func snapshot() -> Tally { tally.withLock { $0 } }

    func resetFlood() { tally.withLock { $0.flood = Tally.Flood() } }

    // MARK: Receipt (libmosquitto's thread)

    private func received(topic: String, payload: UnsafeRawBufferPointer, at receipt: UInt64) {
        if topic.hasPrefix("bench/") {
            let parts = topic.split(separator: "/")
            guard parts.count >= 4 else { return }
            let id = parts[1]
            if id.hasPrefix("hr"), let index = Int(id.dropFirst(2)) {
                var sequences: [UInt16] = []
                PayloadScanner.forEachInteger(after: PayloadScanner.energyKey, in: payload) { sequences.append(UInt16(truncatingIfNeeded: $0)) }
                record(heartRate: index, sequences: sequences, receipt: receipt)
            } else if id.hasPrefix("imu"), let index = Int(id.dropFirst(3)) {
                let samples = PayloadScanner.count(PayloadScanner.timestampKey, in: payload)
                tally.withLock { tally in
                    if index < tally.boseSeen.count { tally.boseSeen[index] = true }
                    if tally.measuringReceipts {
                        tally.boseSamples += UInt64(samples)
                        tally.messages += 1
                    }
                }
            }
        } else if topic.hasPrefix("relay/") {
            guard let index = Int(topic.suffix(4), radix: 16),
                  let measurement = try? HeartRateMeasurement.decode(Array(payload)),
                  let energy = measurement.energyExpendedKJ else { return }
            record(heartRate: index, sequences: [UInt16(truncatingIfNeeded: energy)], receipt: receipt)
        } else if topic.hasPrefix("flood/") {
            tally.withLock { tally in
                if tally.flood.count == 0 { tally.flood.first = receipt }
                tally.flood.count += 1
                tally.flood.last = receipt
            }
        }
    }

    private func record(heartRate index: Int, sequences: [UInt16], receipt: UInt64) {
        guard !sequences.isEmpty else { return }
        // Counters and send instants first, outside the tally's lock (the ledger has its own).
        let counters = tally.withLock { tally -> [UInt64] in
            guard index < tally.lastCounter.count else { return [] }
            var counters: [UInt64] = []
            counters.reserveCapacity(sequences.count)
            for sequence in sequences {
                let last = tally.lastCounter[index]
                let delta = Int64(Int16(bitPattern: sequence &- UInt16(truncatingIfNeeded: last)))
                let counter = last == 0 ? UInt64(sequence) : UInt64(max(0, Int64(last) + delta))
                if counter <= last {
                    tally.outOfOrder += 1
                    continue
                }
                tally.lastCounter[index] = counter
                counters.append(counter)
            }
            return counters
        }
        let sent = counters.map { ledger?.sendInstant(device: index, counter: $0) }
        tally.withLock { tally in
            guard index < tally.heartRateSeen.count else { return }
            tally.heartRateSeen[index] = true
            if tally.measuringReceipts {
                tally.heartRateSamples += UInt64(counters.count)
                tally.messages += 1
            }
            guard let window = tally.window else { return }
            for (counter, instant) in zip(counters, sent) where window.contains(counter, device: index) {
                guard let instant else {
                    tally.unmatched += 1
                    continue
                }
                tally.windowSamplesReceived += 1
                let micros = receipt > instant ? (receipt - instant) / 1000 : 0
                _ = tally.latency.record(min(micros, Tally.latencyCeilingMicros))
            }
        }
    }
}

/// What the subscriber counted.
struct Tally: Sendable {
    static let latencyCeilingMicros: UInt64 = 60_000_000

    struct Window: Sendable {
        var floor: [UInt64]
        var ceiling: [UInt64]?

        func contains(_ counter: UInt64, device: Int) -> Bool {
            guard device < floor.count, counter > floor[device] else { return false }
            guard let ceiling else { return true }
            return counter <= ceiling[device]
        }
    }

    struct Flood: Sendable {
        var count: UInt64 = 0
        var first: UInt64 = 0
        var last: UInt64 = 0
    }

    var acknowledgedSubscriptions = 0
    var heartRateSeen: [Bool]
    var boseSeen: [Bool]
    var lastCounter: [UInt64]
    var window: Window?
    var measuringReceipts = false
    /// Received while `measuringReceipts`: the delivered rates.
    var heartRateSamples: UInt64 = 0
    var boseSamples: UInt64 = 0
    var messages: UInt64 = 0
    /// Samples sent within the window (by counter) that arrived, at any time: the loss count's other half.
    var windowSamplesReceived: UInt64 = 0
    /// Send → receipt of the window's samples, microseconds.
    var latency = Histogram<UInt64>(highestTrackableValue: Tally.latencyCeilingMicros, numberOfSignificantValueDigits: .three)
    var unmatched: UInt64 = 0
    var outOfOrder: UInt64 = 0
    var flood = Flood()

    init(heartRateDevices: Int, boseDevices: Int) {
        heartRateSeen = Array(repeating: false, count: heartRateDevices)
        boseSeen = Array(repeating: false, count: boseDevices)
        lastCounter = Array(repeating: 0, count: heartRateDevices)
    }
}

/// Finds values in the gateway's JSON without parsing it: the bench shares the machine with what it measures,
/// so it reads only what it needs.
enum PayloadScanner {
    static let energyKey = Array(#""energy_kj":"#.utf8)
    static let timestampKey = Array(#""ts":"#.utf8)

    /// Calls `body` with the unsigned integer after each occurrence of `key`.
    static func forEachInteger(after key: [UInt8], in bytes: UnsafeRawBufferPointer, _ body: (UInt64) -> Void) {
        var index = 0
        while let found = find(key, in: bytes, from: index) {
            var cursor = found + key.count
            var value: UInt64 = 0
            var digits = 0
            while cursor < bytes.count, bytes[cursor] >= 0x30, bytes[cursor] <= 0x39 {
                value = value &* 10 &+ UInt64(bytes[cursor] - 0x30)
                cursor += 1
                digits += 1
            }
            if digits > 0 { body(value) }
            index = cursor
        }
    }

    static func count(_ key: [UInt8], in bytes: UnsafeRawBufferPointer) -> Int {
        var index = 0
        var count = 0
        while let found = find(key, in: bytes, from: index) {
            count += 1
            index = found + key.count
        }
        return count
    }

    private static func find(_ key: [UInt8], in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard let first = key.first, bytes.count >= key.count else { return nil }
        var index = start
        let last = bytes.count - key.count
        while index <= last {
            if bytes[index] == first {
                var matched = 1
                while matched < key.count, bytes[index + matched] == key[matched] { matched += 1 }
                if matched == key.count { return index }
            }
            index += 1
        }
        return nil
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
