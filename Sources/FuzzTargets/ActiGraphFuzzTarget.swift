import Wearables

extension FuzzTarget {
    /// ActiGraph Link's frames, requests and responses, raw and IMU stream packets, epoch ranges, pages and
    /// records, stream settings, device status, and the SDK's date text.
    static let actiGraph = FuzzTarget(
        name: "actigraph",
        summary: "ActiGraph: frames, requests, responses, raw and IMU packets, epochs, settings, status, SDK dates"
    ) { bytes in
        for frame in allVendorFrames(bytes) {
            _ = try? ActiGraphRequest(frame: frame)
            _ = try? ActiGraphResponse(frame: frame)
        }
        checkLayout(ActiGraphRawPacket.self, bytes)
        checkLayout(ActiGraphIMUPacket.self, bytes)
        checkLayout(ActiGraphEpochRange.self, bytes)
        checkLayout(ActiGraphEpochOpened.self, bytes)
        checkLayout(ActiGraphEpochRecord.self, bytes)
        checkLayout(ActiGraphEpochPage.self, bytes)
        checkLayout(ActiGraphStreamSettings.self, bytes)
        checkLayout(ActiGraphDeviceStatus.self, bytes)
        if let seconds = ActiGraphSDKDate.unixSeconds(from: String(decoding: bytes, as: UTF8.self)) {
            let text = ActiGraphSDKDate.text(fromUnixSeconds: seconds)
            precondition(ActiGraphSDKDate.unixSeconds(from: text) == seconds, "an SDK date does not survive text → seconds")
        }
    }
}
