/// The six H10 recording actions as PSFTP messages: what the driver writes (`message()`, then `PSFTPFrame.split`)
/// and, for simulated sensors, what they read back (`decode`).
///
/// `polarofficial/polar-ble-sdk` Android `sdk/…/impl/BDBleApiImpl.kt` (iOS `PolarBleApiImpl.swift` agrees):
/// - start: query `REQUEST_START_RECORDING` with `PbPFtpRequestStartRecordingParams` (sample type heart rate or RR
///   interval, the interval as `PbDuration.seconds`, sent for RR too, where the device ignores it, and the
///   recording's identifier, 1…64 characters per `PolarH10OfflineExerciseApi.startRecording`);
/// - stop, status: queries `REQUEST_STOP_RECORDING`, `REQUEST_RECORDING_STATUS`, without parameters;
/// - list: `PbPFtpOperation` GET of a directory (a path ending in "/"); the SDK walks the H10 from "/" (`H10ExerciseListing`);
/// - fetch: GET of an exercise's `SAMPLES.BPB`; remove: REMOVE of the same path.
///
/// The SDK checks none of the values itself; this type refuses what the SDK's API cannot express (another interval,
/// an identifier of the wrong length, a path not starting with "/"), so `decode(message()) == self`.
public enum H10RecordingRequest: Sendable, Hashable {
    case start(identifier: String, sampleType: H10RecordingSampleType, interval: H10RecordingInterval)
    case stop
    case status
    case list(directory: String)
    case fetch(path: String)
    case remove(path: String)

    /// `PolarH10OfflineExerciseApi.startRecording`'s `@Size(min = 1, max = 64)` (Java string length: UTF-16 units).
    public static let identifierLengths = 1...64

    public func message() throws(GATTCodecError) -> PSFTPRequestMessage {
        switch self {
        case .start(let identifier, let sampleType, let interval):
            try Self.check(identifier: identifier)
            var duration = Psftp_PbDuration()
            duration.seconds = UInt32(interval.rawValue)
            var parameters = Psftp_PbPFtpRequestStartRecordingParams()
            parameters.sampleType = sampleType.protobufValue
            parameters.recordingInterval = duration
            parameters.sampleDataIdentifier = identifier
            return .query(id: PSFTPQuery.requestStartRecording.rawValue, parameters: PSFTPProtobuf.encode(parameters))
        case .stop: return .query(id: PSFTPQuery.requestStopRecording.rawValue)
        case .status: return .query(id: PSFTPQuery.requestRecordingStatus.rawValue)
        case .list(let path):
            guard path.hasSuffix("/") else { throw .outOfRange(field: "PSFTP directory path without a trailing /, length", value: path.utf8.count) }
            return try Self.operation(.get, path)
        case .fetch(let path):
            guard !path.hasSuffix("/") else { throw .outOfRange(field: "PSFTP file path with a trailing /, length", value: path.utf8.count) }
            return try Self.operation(.get, path)
        case .remove(let path): return try Self.operation(.remove, path)
        }
    }

    /// The frames to write to the MTU characteristic, one write each.
    public func frames(mtu: Int) throws(GATTCodecError) -> [[UInt8]] {
        try PSFTPFrame.split(message().encode(), mtu: mtu).map { $0.encode() }
    }

    public static func decode(_ message: PSFTPRequestMessage) throws(GATTCodecError) -> H10RecordingRequest {
        switch message {
        case .query(let id, let parameters):
            guard let query = PSFTPQuery(rawValue: id) else { throw .unknownIdentifier(field: "PSFTP query id", value: Int(id)) }
            switch query {
            case .requestStartRecording: return try start(from: parameters)
            case .requestStopRecording, .requestRecordingStatus:
                guard parameters.isEmpty else { throw .outOfRange(field: "PSFTP query \(id) parameters length", value: parameters.count) }
                return query == .requestStopRecording ? .stop : .status
            }
        case .request(let bytes, let data):
            guard data.isEmpty else { throw .outOfRange(field: "PSFTP GET / REMOVE data length", value: data.count) }
            let operation = try PSFTPProtobuf.decode(Psftp_PbPFtpOperation.self, bytes)
            try check(path: operation.path)
            switch operation.command {
            case .get: return operation.path.hasSuffix("/") ? .list(directory: operation.path) : .fetch(path: operation.path)
            case .remove: return .remove(path: operation.path)
            case .put, .merge: throw .unknownIdentifier(field: "PSFTP operation command (H10 recording uses GET and REMOVE)",
                                                        value: operation.command.rawValue)
            }
        }
    }

    private static func start(from bytes: [UInt8]) throws(GATTCodecError) -> H10RecordingRequest {
        let parameters = try PSFTPProtobuf.decode(Psftp_PbPFtpRequestStartRecordingParams.self, bytes)
        let sampleType: H10RecordingSampleType
        switch parameters.sampleType {
        case .sampleTypeHeartRate: sampleType = .heartRate
        case .sampleTypeRrInterval: sampleType = .rrInterval
        case .sampleTypeUndefined: throw .reservedValue(field: "PSFTP start recording sample type", value: 0)
        }
        let duration = parameters.recordingInterval
        guard duration.hours == 0, duration.minutes == 0, duration.millis == 0,
              let interval = H10RecordingInterval(rawValue: Int(duration.seconds)) else {
            throw .outOfRange(field: "H10 recording interval in seconds", value: Int(duration.hours) * 3600 + Int(duration.minutes) * 60 + Int(duration.seconds))
        }
        try check(identifier: parameters.sampleDataIdentifier)
        return .start(identifier: parameters.sampleDataIdentifier, sampleType: sampleType, interval: interval)
    }

    private static func operation(_ command: Psftp_PbPFtpOperation.Command, _ path: String) throws(GATTCodecError) -> PSFTPRequestMessage {
        try check(path: path)
        var operation = Psftp_PbPFtpOperation()
        operation.command = command
        operation.path = path
        return .request(operation: PSFTPProtobuf.encode(operation))
    }

    private static func check(identifier: String) throws(GATTCodecError) {
        guard identifierLengths.contains(identifier.utf16.count) else {
            throw .outOfRange(field: "H10 recording identifier length", value: identifier.utf16.count)
        }
    }

    /// Every path the SDK sends is absolute ("/", "/<identifier>/SAMPLES.BPB").
    private static func check(path: String) throws(GATTCodecError) {
        guard path.hasPrefix("/") else { throw .outOfRange(field: "PSFTP path not starting with /, length", value: path.utf8.count) }
    }
}

/// What an H10 recording holds (`PolarH10OfflineExerciseApi.SampleType`).
public enum H10RecordingSampleType: String, Sendable, CaseIterable {
    /// Heart rate in beats per minute, one value per interval.
    case heartRate = "hr"
    /// RR intervals in milliseconds, every beat (the interval does not apply).
    case rrInterval = "rr"

    var protobufValue: Psftp_PbSampleType { self == .heartRate ? .sampleTypeHeartRate : .sampleTypeRrInterval }
}

/// The intervals the SDK offers (`PolarH10OfflineExerciseApi.RecordingInterval`), in seconds.
public enum H10RecordingInterval: Int, Sendable, CaseIterable {
    case oneSecond = 1
    case fiveSeconds = 5
}
