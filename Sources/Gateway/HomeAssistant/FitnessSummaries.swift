import FoundationEssentials
import MQTT
import Wearables

/// Every device's `FitnessSummary`, what of them is yet to publish, and their file
/// (`<state_dir>/fitness-summaries.json`, written whole with `AtomicFile`): the morning's steps survive a restart.
struct FitnessSummaries: Sendable {
    typealias Update = EntityStateFeed.Update

    private var summaries: [String: FitnessSummary]
    private var unpublished: [String: Set<String>] = [:]
    private var unsaved = false
    let timeZone: TimeZone
    /// Nil keeps them in memory only (tests).
    let path: String?

    init(stateDirectory: String?, timeZone: TimeZone = .current) {
        self.timeZone = timeZone
        path = stateDirectory.map { $0 + "/fitness-summaries.json" }
        let data = path.flatMap { readWholeFile(atPath: $0) }.map { Data($0) }
        // An unreadable file loses only today's summaries, which the next sync rebuilds: not worth refusing to start.
        summaries = data.flatMap { try? JSONDecoder().decode([String: FitnessSummary].self, from: $0) } ?? [:]
    }

    mutating func record(_ record: FitnessRecord, device: String, now: Int64) {
        let today = FitnessSummary.day(ofUnixMilliseconds: now, in: timeZone)
        let recordDay = FitnessSummary.day(ofUnixMilliseconds: record.timestamp, in: timeZone)
        var summary = summaries[device] ?? FitnessSummary(day: today)
        note(summary.add(record, today: today, recordDay: recordDay), device: device)
        summaries[device] = summary
    }

    mutating func syncFinished(device: String, now: Int64) {
        var summary = summaries[device] ?? FitnessSummary(day: FitnessSummary.day(ofUnixMilliseconds: now, in: timeZone))
        note(summary.syncFinished(at: now), device: device)
        summaries[device] = summary
    }

    /// The values changed since the last call, after starting a new day where midnight passed.
    mutating func takeUpdates(now: Int64) -> [Update] {
        let today = FitnessSummary.day(ofUnixMilliseconds: now, in: timeZone)
        for device in summaries.keys {
            note(summaries[device]!.rollOver(to: today), device: device)
        }
        defer { unpublished = [:] }
        return unpublished.sorted { $0.key < $1.key }.flatMap { device, keys in
            keys.sorted().compactMap { key in summaries[device]?.value(key).map { Update(device: device, key: key, value: $0) } }
        }
    }

    /// Every known value, for Home Assistant or the broker coming back.
    func all() -> [Update] {
        summaries.sorted { $0.key < $1.key }.flatMap { device, summary in
            FitnessSummary.allKeys.compactMap { key in summary.value(key).map { Update(device: device, key: key, value: $0) } }
        }
    }

    var devices: [String] { Array(summaries.keys) }

    mutating func forget(_ device: String) {
        guard summaries.removeValue(forKey: device) != nil else { return }
        unpublished[device] = nil
        unsaved = true
    }

    /// Writes the file when something changed since the last write.
    mutating func save() throws {
        guard unsaved, let path else { return }
        unsaved = false
        try OwnerOnlyDirectory.prepare(String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try AtomicFile.replace(path, with: try encoder.encode(summaries))
    }

    private mutating func note(_ keys: Set<String>, device: String) {
        guard !keys.isEmpty else { return }
        unpublished[device, default: []].formUnion(keys)
        unsaved = true
    }
}
