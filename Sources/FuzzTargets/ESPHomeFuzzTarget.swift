import ESPHome

extension FuzzTarget {
    /// ESPHome's native API as a proxy's bytes reach the gateway: both framings (a decoded message must come back from
    /// its own encoding), the inner layout of sealed frames, the hello and handshake frames, the responder's reading of
    /// a first Noise message, raw advertising data, and both connection state machines fed the input whole (they must
    /// end in an action or a reason, never a trap).
    static let esphome = FuzzTarget(
        name: "esphome",
        summary: "ESPHome native API: plaintext and Noise frames, sealed-frame layout, hello and handshake frames, the "
            + "Noise responder, advertising data, client and server connections"
    ) { bytes in
        var plaintext = PlaintextFrameDecoder(maximumPayload: 1 << 16)
        plaintext.append(bytes)
        while let message = try? plaintext.next() {
            var again = PlaintextFrameDecoder(maximumPayload: 1 << 16)
            again.append(PlaintextFrameDecoder.encode(message))
            precondition((try? again.next()) == message, "a plaintext frame did not come back from its own encoding")
        }
        var noise = NoiseFrameDecoder()
        noise.append(bytes)
        while let frame = try? noise.next() {
            if let message = try? NoiseMessageLayout.decode(frame) {
                precondition((try? NoiseMessageLayout.decode(NoiseMessageLayout.encode(message))) == message,
                             "a sealed frame's layout did not come back from its own encoding")
            }
            _ = try? NoiseHandshakeFrames.parseServerHello(frame)
            _ = try? NoiseHandshakeFrames.parseHandshake(frame)
        }
        let key = [UInt8](repeating: 0x42, count: 32)
        if var responder = try? NoiseHandshake(role: .responder, preSharedKey: key) {
            _ = try? responder.readMessage(bytes)
        }
        let data = AdvertisingData(decoding: bytes)
        precondition(data.serviceUUIDs.allSatisfy { $0.count == 36 }, "a service UUID of the wrong shape")
        for clientKey in [nil, key] as [[UInt8]?] {
            var client = APIClientStateMachine(key: clientKey, clientInfo: "fuzz")
            _ = client.start()
            _ = client.received(bytes)
            if var server = try? APIServerStateMachine(key: clientKey, deviceInfo: DeviceInfoResponse()) {
                _ = server.received(bytes)
            }
        }
    }
}
