import Foundation
import Testing
@testable import Wearables

/// The H10 recording actions over PSFTP and the answers they get. The SDK has no unit test with these messages'
/// bytes, so the vectors here are written by hand from the schema's field numbers and protobuf's wire format
/// (field key = number << 3 | wire type; `pftp_request.proto`, `pftp_response.proto`, `types.proto`,
/// `exercise_samples.proto` in `polarofficial/polar-ble-sdk` `…/src/sdk/proto/`), and the message framing from
/// `BlePsFtpUtils.kt`; each is spelled out where it is used.
@Suite("Polar H10 recording over PSFTP")
struct PolarH10RecordingTests {
    /// PbPFtpRequestStartRecordingParams: sample_type (1) = HEART_RATE 1, recording_interval (2) = PbDuration
    /// { seconds (3) = 1 }, sample_data_identifier (3) = "ABC".
    static let startParameters: [UInt8] = [0x08, 0x01, 0x12, 0x02, 0x18, 0x01, 0x1A, 0x03, 0x41, 0x42, 0x43]
    /// PbPFtpOperation: command (1) = GET 0, path (2) = "/ABC/SAMPLES.BPB".
    static let fetchOperation: [UInt8] = [0x08, 0x00, 0x12, 0x10] + Array("/ABC/SAMPLES.BPB".utf8)
    /// PbRequestRecordingStatusResult: recording_on (1) = true, sample_data_identifier (2) = "ABC".
    static let statusRecording: [UInt8] = [0x08, 0x01, 0x12, 0x03, 0x41, 0x42, 0x43]
    /// PbPFtpDirectory: entries (1) { name "ABC/", size 0 } and { name "SAMPLES.BPB", size 300, created (3) =
    /// PbSystemDateTime { date { 2024, 5, 17 }, time { 8, 30, 5 }, trusted true } }.
    static let directory: [UInt8] = [0x0A, 0x08, 0x0A, 0x04] + Array("ABC/".utf8) + [0x10, 0x00]
        + [0x0A, 0x25, 0x0A, 0x0B] + Array("SAMPLES.BPB".utf8) + [0x10, 0xAC, 0x02]
        + [0x1A, 0x13, 0x0A, 0x07, 0x08, 0xE8, 0x0F, 0x10, 0x05, 0x18, 0x11, 0x12, 0x06, 0x08, 0x08, 0x10, 0x1E, 0x18, 0x05]
        + [0x18, 0x01]
    /// PbExerciseSamples: recording_interval (1) = { seconds 1 }, heart_rate_samples (2, packed) = 60, 61, 200.
    static let heartRateSamples: [UInt8] = [0x0A, 0x02, 0x18, 0x01, 0x12, 0x04, 0x3C, 0x3D, 0xC8, 0x01]
    /// PbExerciseSamples: recording_interval = { seconds 5 }, rr_samples (28: key E2 01) = { rr_intervals (1, packed) 800, 810 }.
    static let rrSamples: [UInt8] = [0x0A, 0x02, 0x18, 0x05, 0xE2, 0x01, 0x06, 0x0A, 0x04, 0xA0, 0x06, 0xAA, 0x06]

    @Test("start, stop and status are queries 14, 15, 16; start carries its parameters; one frame at MTU 20 or 23")
    func queries() throws {
        let start = H10RecordingRequest.start(identifier: "ABC", sampleType: .heartRate, interval: .oneSecond)
        #expect(try start.message() == .query(id: 14, parameters: Self.startParameters))
        #expect(try start.frames(mtu: 23) == [[0x02, 0x0E, 0x80] + Self.startParameters])
        #expect(try H10RecordingRequest.stop.frames(mtu: 20) == [[0x02, 0x0F, 0x80]])
        #expect(try H10RecordingRequest.status.frames(mtu: 20) == [[0x02, 0x10, 0x80]])
        // RR: the interval is still sent (BDBleApiImpl.startRecording), sample type 16 (key 08, value 10).
        let rr = H10RecordingRequest.start(identifier: "x", sampleType: .rrInterval, interval: .fiveSeconds)
        #expect(try rr.message() == .query(id: 14, parameters: [0x08, 0x10, 0x12, 0x02, 0x18, 0x05, 0x1A, 0x01, 0x78]))
    }

    @Test("list, fetch and remove are PbPFtpOperation requests: GET of a directory, GET and REMOVE of SAMPLES.BPB")
    func operations() throws {
        #expect(try H10RecordingRequest.list(directory: "/").message().encode() == [0x05, 0x00, 0x08, 0x00, 0x12, 0x01, 0x2F])
        #expect(try H10RecordingRequest.fetch(path: "/ABC/SAMPLES.BPB").message() == .request(operation: Self.fetchOperation))
        var remove = Self.fetchOperation
        remove[1] = 0x03
        #expect(try H10RecordingRequest.remove(path: "/ABC/SAMPLES.BPB").message() == .request(operation: remove))
        // 2 + 20 bytes at MTU 20: 19 in a MORE frame, 3 in the LAST.
        let frames = try H10RecordingRequest.fetch(path: "/ABC/SAMPLES.BPB").frames(mtu: 20)
        #expect(frames.map(\.count) == [20, 4] && frames[0][0] == 0x06 && frames[1][0] == 0x13)
    }

    @Test("every request decodes back from its message (what a simulated H10 reads)")
    func requestRoundTrips() throws {
        let requests: [H10RecordingRequest] = [
            .start(identifier: "ABC", sampleType: .heartRate, interval: .oneSecond),
            .start(identifier: String(repeating: "é", count: 64), sampleType: .rrInterval, interval: .fiveSeconds),
            .stop, .status, .list(directory: "/"), .list(directory: "/ABC/"), .fetch(path: "/ABC/SAMPLES.BPB"), .remove(path: "/ABC/SAMPLES.BPB"),
        ]
        for request in requests {
            #expect(try H10RecordingRequest.decode(request.message()) == request)
            #expect(try H10RecordingRequest.decode(PSFTPRequestMessage.decode(request.message().encode())) == request)
        }
    }

    @Test("refused: an identifier of 0 or 65 characters, paths the SDK never sends, PUT, unknown queries, parameters on stop")
    func refusals() throws {
        #expect(throws: GATTCodecError.outOfRange(field: "H10 recording identifier length", value: 0)) {
            try H10RecordingRequest.start(identifier: "", sampleType: .heartRate, interval: .oneSecond).message()
        }
        #expect(throws: GATTCodecError.outOfRange(field: "H10 recording identifier length", value: 65)) {
            try H10RecordingRequest.start(identifier: String(repeating: "a", count: 65), sampleType: .heartRate, interval: .oneSecond).message()
        }
        #expect(throws: GATTCodecError.self) { try H10RecordingRequest.list(directory: "/ABC").message() }
        #expect(throws: GATTCodecError.self) { try H10RecordingRequest.fetch(path: "/ABC/").message() }
        #expect(throws: GATTCodecError.self) { try H10RecordingRequest.remove(path: "ABC/SAMPLES.BPB").message() }
        var put = Self.fetchOperation
        put[1] = 0x01
        #expect(throws: GATTCodecError.unknownIdentifier(field: "PSFTP operation command (H10 recording uses GET and REMOVE)", value: 1)) {
            try H10RecordingRequest.decode(.request(operation: put))
        }
        #expect(throws: GATTCodecError.unknownIdentifier(field: "PSFTP query id", value: 13)) { try H10RecordingRequest.decode(.query(id: 13)) }
        #expect(throws: GATTCodecError.outOfRange(field: "PSFTP query 15 parameters length", value: 1)) {
            try H10RecordingRequest.decode(.query(id: 15, parameters: [0]))
        }
        // An interval of 2 s, and a start without its identifier (field 3 left out).
        #expect(throws: GATTCodecError.outOfRange(field: "H10 recording interval in seconds", value: 2)) {
            try H10RecordingRequest.decode(.query(id: 14, parameters: [0x08, 0x01, 0x12, 0x02, 0x18, 0x02, 0x1A, 0x01, 0x41]))
        }
        #expect(throws: GATTCodecError.outOfRange(field: "H10 recording identifier length", value: 0)) {
            try H10RecordingRequest.decode(.query(id: 14, parameters: [0x08, 0x01, 0x12, 0x02, 0x18, 0x01]))
        }
        // Sample type missing (required): swift-protobuf's check, reported with the message's name.
        #expect(throws: GATTCodecError.outOfRange(field: "psftp.PbPFtpRequestStartRecordingParams without a required field, length", value: 4)) {
            try H10RecordingRequest.decode(.query(id: 14, parameters: [0x12, 0x02, 0x18, 0x01]))
        }
    }

    @Test("the status answer: recording with its identifier, or not recording; both encode back")
    func status() throws {
        #expect(try H10RecordingStatus.decode(Self.statusRecording) == H10RecordingStatus(isRecording: true, identifier: "ABC"))
        #expect(try H10RecordingStatus.decode([0x08, 0x00]) == H10RecordingStatus(isRecording: false))
        #expect(H10RecordingStatus(isRecording: true, identifier: "ABC").encode() == Self.statusRecording)
        #expect(throws: GATTCodecError.self) { try H10RecordingStatus.decode([]) }
        #expect(throws: GATTCodecError.truncated(expected: 2, actual: 1)) { try H10RecordingStatus.decode([0x08]) }
    }

    @Test("the directory answer, and the SDK's walk: subdirectories to GET, SAMPLES.BPB named by its first path component")
    func listing() throws {
        let listing = try PSFTPDirectory.decode(Self.directory)
        let created = PSFTPDateTime(year: 2024, month: 5, day: 17, hour: 8, minute: 30, second: 5, trusted: true)
        #expect(listing == PSFTPDirectory(entries: [.init(name: "ABC/", size: 0), .init(name: "SAMPLES.BPB", size: 300, created: created)]))
        #expect(listing.encode() == Self.directory)
        #expect(created.date == Date(timeIntervalSince1970: 1_715_934_605))
        #expect(PSFTPDateTime(year: 2024, month: 2, day: 30, hour: 0, minute: 0, second: 0, trusted: false).date == nil)

        let root = H10ExerciseListing.step(directory: "/", listing: listing)
        #expect(root.subdirectories == ["/ABC/"] && root.exercises.isEmpty)
        let inside = H10ExerciseListing.step(directory: "/ABC/", listing: listing)
        #expect(inside.subdirectories == ["/ABC/ABC/"])
        #expect(inside.exercises == [.init(path: "/ABC/SAMPLES.BPB", identifier: "ABC", size: 300, created: created)])
        let other = PSFTPDirectory(entries: [.init(name: "DEVICE.BPB", size: 10), .init(name: "SAMPLES.BPB", size: 1)])
        #expect(H10ExerciseListing.step(directory: "/", listing: other).exercises.isEmpty)
    }

    @Test("SAMPLES.BPB: heart rates at their interval, or RR intervals; each encodes back; times from a given start")
    func exerciseSamples() throws {
        let heartRate = try H10ExerciseSamples.decode(Self.heartRateSamples)
        #expect(heartRate == H10ExerciseSamples(intervalMilliseconds: 1000, heartRates: [60, 61, 200]))
        #expect(try heartRate.encode() == Self.heartRateSamples)
        let start = Date(timeIntervalSince1970: 1_715_934_605)
        #expect(heartRate.sampleTimes(start: start) == [start, start + 1, start + 2])

        let rr = try H10ExerciseSamples.decode(Self.rrSamples)
        #expect(rr == H10ExerciseSamples(intervalMilliseconds: 5000, rrIntervalsMilliseconds: [800, 810]))
        #expect(try rr.encode() == Self.rrSamples)

        let offline = H10ExerciseSamples(intervalMilliseconds: 60_000 + 250, heartRates: [70], heartRateOffline: [(3, 9)])
        let again = try H10ExerciseSamples.decode(offline.encode())
        #expect(again == offline && again.heartRateOffline.map(\.start) == [3] && again.heartRateOffline.map(\.stop) == [9])
        // recording_interval is required.
        #expect(throws: GATTCodecError.self) { try H10ExerciseSamples.decode([0x12, 0x01, 0x3C]) }
    }

    @Test("SAMPLES.BPB: an interval whose seconds overflow 32 bits (found by the polar fuzz target) encodes back")
    func hugeInterval() throws {
        // The fuzzer's input: a recording_interval of 2,399,009,785 hours; then the largest interval a file can state.
        let found: [UInt8] = [0x0A, 0x08, 0x08, 0x08, 0x08, 0xF9, 0xF7, 0xF7, 0xF7, 0x08, 0x08, 0x08, 0x08, 0x01]
        let largest = H10ExerciseSamples(intervalMilliseconds: UInt64(UInt32.max) * (3_600_000 + 60_000 + 1000 + 1))
        for samples in [try H10ExerciseSamples.decode(found), largest,
                        H10ExerciseSamples(intervalMilliseconds: UInt64(UInt32.max) * 1000 + 999),
                        H10ExerciseSamples(intervalMilliseconds: UInt64(UInt32.max) * 1000 + 1000)] {
            #expect(try H10ExerciseSamples.decode(samples.encode()) == samples)
        }
    }
}
