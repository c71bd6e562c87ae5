import Gateway
import Wear2MQTTTesting
import Wearables

extension GatewayHarness {
    /// `request`, sent again while a device that has just reported its history download finished answers `BUSY`: the
    /// ActiGraph and GoFIT drivers publish `completed` / `idle` a moment before they clear their "download running"
    /// flag, and nothing tells when they have. What a client seeing the final progress and syncing again meets too.
    func requestAfterADownload(_ topic: String, _ payload: String = "{}") async -> [String: DeviceValue]? {
        var answer: [String: DeviceValue]?
        // eventually: the driver's running flag is cleared just after its final progress event, and tells nothing
        _ = await eventually {
            answer = await request(topic, payload)
            return answer?["error"]?["code"]?.text != "BUSY"
        }
        return answer
    }
}
