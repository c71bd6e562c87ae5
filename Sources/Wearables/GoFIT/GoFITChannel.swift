import BlueZ

/// The GoFIT vendor service's request/response channel for one connection: typed requests over the shared
/// `FramedRequestChannel`, events (0xE0…0xEF, find phone) to `onEvent`.
final class GoFITChannel: Sendable {
    private let frames: FramedRequestChannel

    init(link: DeviceLink, request: GattCharacteristicInfo, silenceLimit: Duration = .seconds(3),
         onEvent: @escaping @Sendable (GoFITEvent) -> Void) {
        frames = FramedRequestChannel(link: link, request: request, peerName: "the band", silenceLimit: silenceLimit,
                                      unsolicitedOpcodes: 0xE0...0xEF) { frame in
            do { onEvent(try GoFITEvent(frame: frame)) } catch {
                link.logger.notice("ignored an unknown event from the band", metadata: ["opcode": "\(frame.opcode)"])
            }
        }
    }

    /// One notification of the Response characteristic.
    func receive(_ segment: [UInt8]) { frames.receive(segment) }

    /// Sends `request` and answers the response's data; a status other than OK is thrown as the contract's error
    /// with the status as `vendor_code`.
    func call(_ request: GoFITRequest) async throws(CommandError) -> [UInt8] {
        let response = try await send(request)
        if let error = response.status.commandError { throw error }
        return response.data
    }

    /// Sends `request` and answers the band's response, whatever its status.
    func send(_ request: GoFITRequest) async throws(CommandError) -> GoFITResponse {
        let frame = try await frames.exchange(opcode: request.opcode.rawValue, payload: request.payload(),
                                              name: "\(request.opcode)")
        do { return try GoFITResponse(frame: frame) } catch {
            throw CommandError(.internalError, "the band's answer to \(request.opcode) cannot be read: \(error)")
        }
    }
}
