import DBus

/// Failed calls by D-Bus error name, for `wear2mqtt_dbus_errors_total{name}`. A remote may answer with any name,
/// and a metric's label set must stay bounded: past `limit` distinct names, the rest count as `other`.
struct DBusErrorCounts: Sendable {
    static let limit = 32
    private(set) var counts: [String: UInt64] = [:]

    mutating func count(_ error: BusError) {
        let name = switch error {
        case .remote(let name, _): name
        case .timeout: "timeout"
        case .disconnected: "disconnected"
        default: "other"
        }
        let key = counts[name] != nil || counts.count < Self.limit ? name : "other"
        counts[key, default: 0] += 1
    }
}
