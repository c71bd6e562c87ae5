import Foundation
@testable import MQTT
import Testing
import Wear2MQTTTesting

@Suite struct DurableSpoolTests {
    func message(_ index: Int, size: Int = 20) -> OutgoingMessage {
        OutgoingMessage(topic: "t/\(index)", payload: Array(String(repeating: "x", count: size).utf8), qos: .atLeastOnce)
    }

    func drain(_ spool: DurableSpool) throws -> [SpooledRecord] {
        var records: [SpooledRecord] = []
        while let record = try spool.nextUnsent() { records.append(record) }
        return records
    }

    @Test func replaysInOrderWhatWasNotAcknowledgedAfterReopening() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let spool = try DurableSpool(directory: directory.path, maximumBytes: 1 << 20)
            for index in 1...10 { try spool.append(message(index), enqueuedAtMilliseconds: 0) }
            let sent = try drain(spool)
            #expect(sent.map(\.sequence) == Array(1...10))
            for sequence in 1...4 { spool.acknowledge(UInt64(sequence)) }
            spool.acknowledge(6) // out of order: 5 is still pending, so 6 must come back too
            spool.sync()
        }
        let reopened = try DurableSpool(directory: directory.path, maximumBytes: 1 << 20)
        let replayed = try drain(reopened)
        #expect(replayed.map(\.message.topic) == (5...10).map { "t/\($0)" })
        #expect(reopened.pendingCount == 6)
        try reopened.append(message(11), enqueuedAtMilliseconds: 0)
        #expect(try drain(reopened).map(\.sequence) == [11])
    }

    @Test func aTornTailFromACrashIsCutAndTheRestKept() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let segmentPath: String
        do {
            let spool = try DurableSpool(directory: directory.path, maximumBytes: 1 << 20)
            for index in 1...3 { try spool.append(message(index), enqueuedAtMilliseconds: 0) }
            spool.sync()
            segmentPath = spool.segments[0].path
        }
        // A crash in the middle of the fourth write leaves half a record.
        let half = Array(SpoolRecordCodec.encode(SpooledRecord(sequence: 4, enqueuedAtMilliseconds: 0, message: message(4))).prefix(15))
        let handle = try #require(FileHandle(forWritingAtPath: segmentPath))
        handle.seekToEndOfFile()
        handle.write(Data(half))
        try handle.close()

        let reopened = try DurableSpool(directory: directory.path, maximumBytes: 1 << 20)
        #expect(reopened.recoveredCorruptions == 1)
        try reopened.append(message(5), enqueuedAtMilliseconds: 0)
        #expect(try drain(reopened).map(\.message.topic) == ["t/1", "t/2", "t/3", "t/5"])
    }

    @Test func refusesWhatDoesNotFitAndWritesNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let spool = try DurableSpool(directory: directory.path, maximumBytes: 4096)
        var stored = 0
        while true {
            do { try spool.append(message(stored, size: 200), enqueuedAtMilliseconds: 0) } catch {
                #expect(error == .spoolFull(limitBytes: 4096))
                break
            }
            stored += 1
        }
        #expect(stored > 10)
        #expect(spool.totalBytes <= 4096)
        #expect(try drain(spool).count == stored)
    }

    @Test func acknowledgedSegmentsAreDeletedSoTheSpoolNeverFillsUpWhileTheBrokerKeepsUp() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let spool = try DurableSpool(directory: directory.path, maximumBytes: 16 << 10, segmentBytes: 4096)
        for index in 0..<2_000 {
            try spool.append(message(index, size: 100), enqueuedAtMilliseconds: 0)
            let record = try #require(try spool.nextUnsent())
            spool.acknowledge(record.sequence)
        }
        #expect(spool.totalBytes <= 16 << 10)
        #expect(spool.pendingCount == 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".seg") }
        #expect(files.count <= 2)
    }

    @Test func sequenceNumbersKeepGrowingAcrossRestartsAfterEverythingWasAcknowledged() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let spool = try DurableSpool(directory: directory.path, maximumBytes: 1 << 20)
            for index in 1...3 { try spool.append(message(index), enqueuedAtMilliseconds: 0) }
            for record in try drain(spool) { spool.acknowledge(record.sequence) }
            spool.sync()
        }
        let reopened = try DurableSpool(directory: directory.path, maximumBytes: 1 << 20)
        #expect(try drain(reopened).isEmpty)
        #expect(try reopened.append(message(4), enqueuedAtMilliseconds: 0) == 4)
    }
}
