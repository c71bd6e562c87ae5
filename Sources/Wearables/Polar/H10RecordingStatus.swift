/// The answer to `H10RecordingRequest.status`: `PbRequestRecordingStatusResult` (`pftp_response.proto`), read as
/// the SDK's `requestRecordingStatus` does (`BDBleApiImpl.kt`: whether a recording runs, and its identifier when
/// the device names one). `encode` is for simulated sensors.
public struct H10RecordingStatus: Sendable, Hashable {
    public var isRecording: Bool
    public var identifier: String?

    public init(isRecording: Bool, identifier: String? = nil) {
        self.isRecording = isRecording
        self.identifier = identifier
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> H10RecordingStatus {
        let result = try PSFTPProtobuf.decode(Psftp_PbRequestRecordingStatusResult.self, bytes)
        return H10RecordingStatus(isRecording: result.recordingOn, identifier: result.hasSampleDataIdentifier ? result.sampleDataIdentifier : nil)
    }

    public func encode() -> [UInt8] {
        var result = Psftp_PbRequestRecordingStatusResult()
        result.recordingOn = isRecording
        if let identifier { result.sampleDataIdentifier = identifier }
        return PSFTPProtobuf.encode(result)
    }
}
