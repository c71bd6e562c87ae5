#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import EventLoop
import Foundation
@testable import MQTT
import Synchronization
import Testing
import Wear2MQTTTesting

/// The durable spool with its fdatasync on the sync thread, on a real event loop, with an fdatasync that does not
/// return until the test lets it (a slow card as slow as the test wants): the loop goes on appending while it hangs, and
/// no record is reported stored before an fdatasync of its segment returned.
@Suite struct SpoolSyncTests {
    @Test func theLoopKeepsAppendingWhileFdatasyncHangsAndNothingIsStoredBeforeItReturns() async throws {
        let test = try SpoolSyncFixture()
        let held = test.held
        _ = try await test.append(1)
        // The first record's sync is under way on the sync thread and does not return.
        #expect(await held.changes.until { held.files.count == 1 })
        // The loop is free: 99 more records are written and the loop answers, while that fdatasync still hangs.
        let more = try await test.append(99)
        #expect(more == Array(2...100))
        #expect(test.answers.count == 0, "a record reported stored before its fdatasync returned")
        #expect(held.files.count == 1)

        // The first sync returns (its data, then the new segment's directory): record 1 alone is stored, and one
        // sync for the 99 written meanwhile starts at once.
        test.held.release(2)
        #expect(await test.answers.changes.until { test.answers.count == 1 })
        #expect(await held.changes.until { held.files.count == 3 })
        #expect(test.answers.stored == [1])
        test.held.release()
        #expect(await test.answers.changes.until { test.answers.count == 100 })
        #expect(test.answers.stored == Array(1...100))
        #expect(held.files.count == 3, "the 99 records shared one fdatasync")
        let durable = try await test.onLoop { $0.sync.durableSequence }
        #expect(durable == 100)
        try await test.end()
    }

    @Test func aSegmentClosedOrUnlinkedWhileItsSyncRunsIsSyncedBeforeItsRecordsAreStored() async throws {
        let test = try SpoolSyncFixture(segmentBytes: 4096)
        let held = test.held
        _ = try await test.append(1, size: 1000)
        #expect(await held.changes.until { held.files.count == 1 })
        // Enough for several segments while the first sync hangs: each rotation closes a segment with unsynced records.
        _ = try await test.append(15, size: 1000)
        let segments = try await test.onLoop { $0.spool.segments.map(\.path) }
        #expect(segments.count >= 4)
        // Every record reaches the broker and is acknowledged meanwhile: acknowledged segments are unlinked.
        try await test.onLoop { harness in
            while let record = try harness.spool.nextUnsent() { harness.spool.acknowledge(record.sequence) }
        }
        held.release(100)
        #expect(await test.answers.changes.until { test.answers.count == 16 })
        #expect(test.answers.stored == Array(1...16))
        let synced = Set(held.files.map { $0.replacingOccurrences(of: " (deleted)", with: "") })
        for segment in segments { #expect(synced.contains(segment), "\(segment) not synced: \(synced)") }
        #expect(synced.contains(test.directory.path), "the new segments' directory entries")
        try await test.end()
    }

    @Test func closingWaitsForTheSyncInFlightAndLeavesEverythingOnDisk() async throws {
        let test = try SpoolSyncFixture()
        let held = test.held
        _ = try await test.append(1)
        #expect(await held.changes.until { held.files.count == 1 })
        _ = try await test.append(4)
        let box = test.box
        let closed = Task {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                box.loop.execute { box.value.sync.close(); done.resume() }
            }
        }
        held.release(100)
        await closed.value
        // By the time close returned every record was answered stored and nothing is left to sync.
        #expect(test.answers.stored == Array(1...5))
        let needsSync = try await test.onLoop { $0.spool.needsSync }
        #expect(!needsSync)
        // A record written after the close is answered at once, and not as stored.
        _ = try await test.append(1)
        #expect(test.answers.count == 6)
        #expect(test.answers.stored == Array(1...5))
        try await test.end()
    }
}

/// A spool and its sync on a loop of their own, with an fdatasync the test holds.
struct SpoolSyncFixture {
    /// An fdatasync that waits for the test's permission, remembering which file each call was for.
    final class HeldSync: Sendable {
        let changes = ChangeNotifier()
        private let calls = Mutex<[String]>([])
        private let permits = DispatchSemaphore(value: 0)

        func sync(_ descriptor: Int32) -> Int32 {
            let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")) ?? "?"
            calls.withLock { $0.append(path) }
            changes.changed()
            permits.wait()
            return fdatasync(descriptor)
        }

        /// Lets `count` calls return.
        func release(_ count: Int = 1) { for _ in 0..<count { permits.signal() } }

        /// The files synced so far, in order (" (deleted)" for one unlinked meanwhile).
        var files: [String] { calls.withLock { $0 } }
    }

    /// What the loop owns: the spool, its sync, and the answers of the durable publishes.
    final class Harness {
        let spool: DurableSpool
        let sync: SpoolSync
        init(spool: DurableSpool, sync: SpoolSync) {
            self.spool = spool
            self.sync = sync
        }
    }

    /// The answers, in the order they came: the record's sequence number, and whether it was stored.
    final class Answers: Sendable {
        let changes = ChangeNotifier()
        private let answers = Mutex<[(sequence: UInt64, stored: Bool)]>([])
        func add(_ sequence: UInt64, _ stored: Bool) {
            answers.withLock { $0.append((sequence, stored)) }
            changes.changed()
        }
        var stored: [UInt64] { answers.withLock { $0.filter(\.stored).map(\.sequence) } }
        var count: Int { answers.withLock { $0.count } }
    }

    let loop: EventLoop
    let directory: TemporaryDirectory
    let held = HeldSync()
    let answers = Answers()
    let box: LoopBound<Harness>

    init(segmentBytes: Int? = nil) throws {
        loop = try EventLoop.started(name: "spool-sync-test")
        directory = try TemporaryDirectory()
        let spool = try DurableSpool(directory: directory.path, maximumBytes: 1 << 20, segmentBytes: segmentBytes)
        let held = held
        box = LoopBound(Harness(spool: spool, sync: SpoolSync(spool: spool, sync: { held.sync($0) })), loop: loop)
        let box = box, loop = loop
        loop.execute { box.value.sync.whenSyncReturns { loop.execute { box.value.sync.collect() } } }
    }

    /// Closes the sync (its thread ends), stops the loop and removes the folder.
    func end() async throws {
        held.release(100)
        try await onLoop { $0.sync.close() }
        loop.stop()
        directory.remove()
    }

    /// Runs `body` on the loop and returns its result.
    func onLoop<T: Sendable>(_ body: @escaping @Sendable (Harness) throws -> T) async throws -> T {
        let box = box
        return try await withCheckedThrowingContinuation { continuation in
            loop.execute { continuation.resume(with: Result { try body(box.value) }) }
        }
    }

    /// Appends `count` records on the loop, each answered into `answers`; returns their sequence numbers.
    func append(_ count: Int, size: Int = 20) async throws -> [UInt64] {
        let answers = answers
        return try await onLoop { harness in
            try (0..<count).map { _ in
                let message = OutgoingMessage(topic: "t", payload: Array(repeating: 120, count: size), qos: .atLeastOnce)
                let sequence = try harness.spool.append(message, enqueuedAtMilliseconds: 0)
                harness.sync.written(sequence) { result in
                    answers.add(sequence, (try? result.get()) != nil)
                }
                return sequence
            }
        }
    }
}
