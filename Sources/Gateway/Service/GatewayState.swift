import Foundation
import MQTT
import Synchronization
import Wearables

/// What the gateway remembers between messages: each device's retained state document, the sample
/// batcher, per-device options and message counts for `bridge/health`. Behind one mutex because the sample
/// hot path (driver notification → JSON → publish) must not hop between actors.
struct GatewayState: Sendable {
    var documents: [String: DeviceStateDocument] = [:]
    var batcher = SampleBatcher()
    var options: [String: DeviceOptions] = [:]
    var sensorsSeen: [String: Set<String>] = [:]
    var messageCounts: [String: Int] = [:]
    var countsSince = ContinuousClock.now

    mutating func document(_ id: String) -> DeviceStateDocument {
        documents[id] ?? DeviceStateDocument()
    }

    /// Applies `change` to the document of `id`; returns the document when it changed.
    mutating func update(_ id: String, _ change: (inout DeviceStateDocument) -> Bool) -> DeviceStateDocument? {
        var document = self.document(id)
        let changed = change(&document)
        documents[id] = document
        return changed ? document : nil
    }

    mutating func count(_ id: String, _ messages: Int = 1) {
        messageCounts[id, default: 0] += messages
    }
}

/// The process's resident set size, from /proc (Linux).
enum ProcessMemory {
    static var residentBytes: Int64? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int64(fields[1]) else { return nil }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }
}
