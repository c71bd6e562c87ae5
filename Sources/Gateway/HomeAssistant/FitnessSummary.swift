import FoundationEssentials
import Wearables

/// What a dashboard shows of one device's synced history: steps today, the newest synced heart rate, SpO2,
/// sleep score and epoch activity, and when the last sync finished. Built from the durable records as they are
/// published, so it needs nothing the records do not carry.
///
/// Pure and `Codable`: the caller persists it (a restart must not forget the morning's steps) and passes the
/// time and the local time zone. A record published twice (the records are at-least-once) counts once; a
/// record of another day does not count toward today; the count starts again at local midnight.
public struct FitnessSummary: Sendable, Equatable, Codable {
    /// A value with the time of the record it came from, so an older record synced late does not replace it.
    struct Latest: Sendable, Equatable, Codable {
        var timestamp: Int64
        var value: Double
    }

    /// The local day (`2026-11-25`) `stepsToday` counts.
    private(set) var day: String
    private(set) var stepsToday: Int64 = 0
    /// Ids of the step-carrying records of `day` already counted.
    private var counted: Set<String> = []
    private(set) var latest: [String: Latest] = [:]
    /// When the last sync finished (gateway time, Unix milliseconds).
    private(set) var lastSync: Int64?

    init(day: String) {
        self.day = day
    }

    /// Entity keys and the record kinds that feed them.
    static let keysByKind: [String: [String]] = [
        "steps": ["steps_today"], "epoch": ["steps_today", "epoch_counts"], "heart_rate": ["last_heart_rate"],
        "spo2": ["last_spo2"], "sleep": ["sleep_score"],
    ]

    static let allKeys = ["steps_today", "last_heart_rate", "last_spo2", "sleep_score", "epoch_counts", "last_sync"]

    /// The entities a device whose driver downloads `kinds` has: each kind's, and the time of the last sync.
    public static func keys(recordKinds kinds: Set<String>) -> Set<String> {
        guard !kinds.isEmpty else { return [] }
        return kinds.reduce(into: ["last_sync"]) { keys, kind in keys.formUnion(keysByKind[kind] ?? []) }
    }

    /// Takes one record; answers the keys whose value changed.
    mutating func add(_ record: FitnessRecord, today: String, recordDay: String) -> Set<String> {
        var changed = rollOver(to: today)
        if let steps = record.fields["steps"]?.integer, record.kind == "steps" || record.kind == "epoch",
           recordDay == day, steps > 0, counted.insert(record.id).inserted {
            stepsToday += steps
            changed.insert("steps_today")
        }
        let value: (key: String, value: Double)? = switch record.kind {
        case "heart_rate": record.fields["bpm"]?.integer.map { ("last_heart_rate", Double($0)) }
        case "spo2": record.fields["percent"]?.integer.map { ("last_spo2", Double($0)) }
        case "sleep": record.fields["score"]?.integer.map { ("sleep_score", Double($0)) }
        case "epoch": Self.vectorMagnitude(record.fields).map { ("epoch_counts", $0) }
        default: nil
        }
        if let (key, value) = value, record.timestamp >= latest[key]?.timestamp ?? .min {
            if latest[key]?.value != value { changed.insert(key) }
            latest[key] = Latest(timestamp: record.timestamp, value: value)
        }
        return changed
    }

    /// A sync finished at `time`.
    /// A sync ended: every value is published again, not only those the records moved, so an entity whose value a
    /// sync left as it was (no steps yet today, just after midnight) still gets its first state.
    mutating func syncFinished(at time: Int64) -> Set<String> {
        lastSync = time
        return Set(Self.allKeys.filter { value($0) != nil })
    }

    /// Local midnight passed: steps today start again from zero. Answers `steps_today` when it changed.
    mutating func rollOver(to today: String) -> Set<String> {
        guard today != day else { return [] }
        day = today
        counted = []
        defer { stepsToday = 0 }
        return stepsToday == 0 ? [] : ["steps_today"]
    }

    /// The value of `key` as published: a number, or Unix milliseconds for `last_sync`.
    func value(_ key: String) -> Double? {
        switch key {
        case "steps_today": Double(stepsToday)
        case "last_sync": lastSync.map(Double.init)
        default: latest[key]?.value
        }
    }

    /// An ActiGraph epoch's activity: the vector magnitude of its three axes' counts, as ActiLife reports it.
    static func vectorMagnitude(_ fields: [String: DeviceValue]) -> Double? {
        guard let x = fields["x_counts"]?.integer, let y = fields["y_counts"]?.integer, let z = fields["z_counts"]?.integer else {
            return nil
        }
        return (Double(x * x + y * y + z * z).squareRoot() * 10).rounded() / 10
    }

    /// `2026-11-25` for a Unix time in milliseconds, in `timeZone`.
    static func day(ofUnixMilliseconds time: Int64, in timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(time) / 1000))
        let month = parts.month ?? 0, day = parts.day ?? 0
        return "\(parts.year ?? 0)-\(month < 10 ? "0" : "")\(month)-\(day < 10 ? "0" : "")\(day)"
    }
}
