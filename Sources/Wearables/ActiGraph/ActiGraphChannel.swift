import BlueZ

/// The ActiGraph vendor service's control channel for one connection: typed requests over the shared
/// `FramedRequestChannel`. The Link sends nothing unasked on Control Response; its streams have their own
/// characteristics.
final class ActiGraphChannel: Sendable {
    static let peerName = "the Link"
    private let frames: FramedRequestChannel

    init(link: DeviceLink, control: GattCharacteristicInfo, silenceLimit: Duration = .seconds(3)) {
        frames = FramedRequestChannel(link: link, request: control, peerName: Self.peerName, silenceLimit: silenceLimit)
    }

    /// One notification of the Control Response characteristic.
    func receive(_ segment: [UInt8]) { frames.receive(segment) }

    /// Sends `request` and answers the response's data; a failure status is thrown as the contract's error
    /// with the SDK's code as `vendor_code` (`ActiGraphStatus.commandError`).
    func call(_ request: ActiGraphRequest) async throws(CommandError) -> [UInt8] {
        let name = "\(request.opcode)"
        let frame = try await frames.exchange(opcode: request.opcode.rawValue, payload: request.payload(), name: name)
        let response = try VendorSession.decoded(from: Self.peerName) { () throws(GATTCodecError) in
            try ActiGraphResponse(frame: frame)
        }
        if let error = response.status.commandError { throw error }
        return response.data
    }
}
