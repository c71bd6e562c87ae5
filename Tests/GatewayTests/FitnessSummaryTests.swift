import Foundation
import Testing

@testable import Gateway
@testable import Wearables

/// The fitness summary Home Assistant shows, from durable records as they are published.
@Suite struct FitnessSummaryTests {
    static let utc = TimeZone(identifier: "UTC")!
    /// 2025-06-15 15:06:40 UTC.
    static let now: Int64 = 1_750_000_000_000
    static let today = FitnessSummary.day(ofUnixMilliseconds: now, in: utc)

    static func steps(_ steps: Int64, at time: Int64, id: String? = nil) -> FitnessRecord {
        FitnessRecord(kind: "steps", id: id ?? "S-steps-\(time)", timestamp: time, fields: ["steps": .integer(steps)])
    }

    @Test func daysAreLocal() {
        #expect(Self.today == "2025-06-15")
        #expect(FitnessSummary.day(ofUnixMilliseconds: Self.now, in: TimeZone(secondsFromGMT: 10 * 3600)!) == "2025-06-16")
        #expect(FitnessSummary.day(ofUnixMilliseconds: 0, in: Self.utc) == "1970-01-01")
    }

    @Test func todaysStepsCountOnceEachAndOtherDaysNotAtAll() {
        var summary = FitnessSummary(day: Self.today)
        let yesterday = Self.now - 86_400_000
        #expect(summary.add(Self.steps(100, at: Self.now - 60_000), today: Self.today, recordDay: Self.today) == ["steps_today"])
        #expect(summary.add(Self.steps(100, at: Self.now - 60_000), today: Self.today, recordDay: Self.today).isEmpty, "a repeat")
        #expect(summary.add(Self.steps(50, at: yesterday), today: Self.today, recordDay: "2025-06-14").isEmpty)
        let epoch = FitnessRecord(kind: "epoch", id: "L-epoch-1", timestamp: Self.now,
                                  fields: ["x_counts": 3, "y_counts": 4, "z_counts": 12, "steps": 7, "wear": true])
        #expect(summary.add(epoch, today: Self.today, recordDay: Self.today) == ["steps_today", "epoch_counts"])
        #expect(summary.value("steps_today") == 107)
        #expect(summary.value("epoch_counts") == 13)
        // Midnight: the count starts again; the newest values stay.
        #expect(summary.rollOver(to: "2025-06-16") == ["steps_today"])
        #expect(summary.value("steps_today") == 0 && summary.value("epoch_counts") == 13)
        #expect(summary.rollOver(to: "2025-06-16").isEmpty)
    }

    @Test func anOlderRecordSyncedLateDoesNotReplaceTheNewestValue() {
        var summary = FitnessSummary(day: Self.today)
        let heartRate = { (bpm: Int64, time: Int64) in FitnessRecord(kind: "heart_rate", id: "h\(time)", timestamp: time, fields: ["bpm": .integer(bpm)]) }
        #expect(summary.add(heartRate(70, Self.now), today: Self.today, recordDay: Self.today) == ["last_heart_rate"])
        #expect(summary.add(heartRate(90, Self.now - 1000), today: Self.today, recordDay: Self.today).isEmpty)
        #expect(summary.value("last_heart_rate") == 70)
        #expect(summary.add(FitnessRecord(kind: "sleep", id: "s", timestamp: Self.now, fields: ["score": 81]), today: Self.today,
                            recordDay: Self.today) == ["sleep_score"])
        #expect(summary.add(FitnessRecord(kind: "spo2", id: "o", timestamp: Self.now, fields: ["percent": 97]), today: Self.today,
                            recordDay: Self.today) == ["last_spo2"])
        #expect(summary.add(FitnessRecord(kind: "steps", id: "bad", timestamp: Self.now, fields: ["steps": "many"]), today: Self.today,
                            recordDay: Self.today).isEmpty, "a record without a number changes nothing")
        #expect(summary.value("last_sync") == nil)
        #expect(summary.syncFinished(at: Self.now) == ["steps_today", "last_heart_rate", "sleep_score", "last_spo2", "last_sync"],
                "a sync publishes every value again")
        #expect(summary.value("last_sync") == Double(Self.now))
    }

    @Test("a sync just after midnight, with no steps yet today, still gives steps today its first value: 0")
    func syncWithNoStepsToday() {
        var summary = FitnessSummary(day: Self.today)
        #expect(summary.syncFinished(at: Self.now).contains("steps_today"))
        #expect(summary.value("steps_today") == 0)
    }

    @Test func keysFollowTheKindsADriverDownloads() {
        #expect(FitnessSummary.keys(recordKinds: []) == [])
        #expect(FitnessSummary.keys(recordKinds: GoFITDriver.recordKinds)
            == ["steps_today", "last_heart_rate", "last_spo2", "sleep_score", "last_sync"])
        #expect(FitnessSummary.keys(recordKinds: ActiGraphDriver.recordKinds) == ["steps_today", "epoch_counts", "last_sync"])
    }

    @Test func summariesArePublishedOnceAndSurviveAReload() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitness-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var summaries = FitnessSummaries(stateDirectory: directory, timeZone: Self.utc)
        summaries.record(Self.steps(120, at: Self.now - 1000), device: "band", now: Self.now)
        summaries.record(Self.steps(30, at: Self.now - 2000), device: "band", now: Self.now)
        #expect(summaries.takeUpdates(now: Self.now) == [.init(device: "band", key: "steps_today", value: 150)])
        #expect(summaries.takeUpdates(now: Self.now).isEmpty)
        try summaries.save()
        var reloaded = FitnessSummaries(stateDirectory: directory, timeZone: Self.utc)
        #expect(reloaded.all() == [.init(device: "band", key: "steps_today", value: 150)])
        // The same record again after the restart (at-least-once) still counts once.
        reloaded.record(Self.steps(120, at: Self.now - 1000), device: "band", now: Self.now)
        #expect(reloaded.takeUpdates(now: Self.now).isEmpty)
        // The next day starts at zero.
        #expect(reloaded.takeUpdates(now: Self.now + 86_400_000) == [.init(device: "band", key: "steps_today", value: 0)])
        let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/fitness-summaries.json")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        // A damaged file starts afresh rather than stopping the gateway.
        try Data("{".utf8).write(to: URL(fileURLWithPath: directory + "/fitness-summaries.json"))
        #expect(FitnessSummaries(stateDirectory: directory, timeZone: Self.utc).all().isEmpty)
    }

    @Test func signalStrengthReportsOnlyWhatMoved() {
        var reports = SignalStrengthReports(step: 5, interval: .seconds(60))
        let start = ContinuousClock.now
        #expect(reports.report(-70, device: "a", at: start) == true)
        #expect(reports.report(-72, device: "a", at: start + .seconds(1)) == false)
        #expect(reports.report(-75, device: "a", at: start + .seconds(2)) == true)
        #expect(reports.report(-60, device: "b", at: start + .seconds(2)) == true, "each device on its own")
        #expect(reports.report(-75, device: "a", at: start + .seconds(120)) == false, "the same value is not news")
        #expect(reports.report(-74, device: "a", at: start + .seconds(120)) == true, "a minute on, a small move goes out")
    }
}
