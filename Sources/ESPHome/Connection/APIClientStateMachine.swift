import SwiftProtobuf

/// The gateway's side of one native-API connection to a Bluetooth proxy, as a pure state machine (swift-nio's habit):
/// bytes and requests in, actions out — bytes to write, messages for the radio, the proxy's identity once it is ready,
/// or the end with a reason. The socket, timers and reconnecting are the caller's.
///
/// The exchange, as aioesphomeapi has it: with a key, an empty frame and the first Noise message, the server's hello
/// (its name) and the second message; then, over either framing, `HelloRequest` → `HelloResponse` (API 1.x) and
/// `DeviceInfoRequest` → `DeviceInfoResponse` (the Bluetooth proxy's feature flags). Pings from the proxy are answered
/// here; a `DisconnectRequest` is answered and ends the connection.
public struct APIClientStateMachine: Sendable {
    public enum Action: Equatable, Sendable {
        case write([UInt8])
        /// The connection is ready for Bluetooth requests.
        case ready(ProxyIdentity)
        /// A message for the radio (advertisements, GATT answers, connection states, free slots).
        case deliver(APIMessage)
        /// Close the socket.
        case close(APIConnectionError)
    }

    public struct ProxyIdentity: Equatable, Sendable {
        public var name: String
        public var macAddress: String
        public var bluetoothMacAddress: String
        public var esphomeVersion: String
        public var model: String
        public var apiVersion: (major: UInt32, minor: UInt32)
        public var features: BluetoothProxyFeatures

        public static func == (a: Self, b: Self) -> Bool {
            a.name == b.name && a.macAddress == b.macAddress && a.bluetoothMacAddress == b.bluetoothMacAddress
                && a.esphomeVersion == b.esphomeVersion && a.model == b.model && a.apiVersion == b.apiVersion && a.features == b.features
        }
    }

    private enum State: Sendable {
        case idle
        case awaitingServerHello(NoiseFrameDecoder, NoiseHandshake)
        case awaitingHandshake(NoiseFrameDecoder, NoiseHandshake)
        case awaitingHelloResponse(APITransport)
        case awaitingDeviceInfo(APITransport, HelloResponse)
        case ready(APITransport)
        case closed
    }

    /// The API version this client speaks (aioesphomeapi's at the time of writing).
    public static let apiVersion = (major: UInt32(1), minor: UInt32(10))

    private var state = State.idle
    /// A keep-alive ping went out and nothing has come back since.
    private var pingOutstanding = false
    private let key: [UInt8]?
    private let clientInfo: String
    private let expectedName: String?

    /// - Parameters:
    ///   - key: the proxy's 32-byte `api.encryption.key`; nil for plaintext.
    ///   - expectedName: the proxy's node name, when configured: another name ends the connection (a proxy that
    ///     took another one's address).
    public init(key: [UInt8]?, clientInfo: String, expectedName: String? = nil) {
        self.key = key
        self.clientInfo = clientInfo
        self.expectedName = expectedName
    }

    public var isReady: Bool {
        if case .ready = state { return true }
        return false
    }

    /// The first bytes, once the socket is connected.
    public mutating func start() -> [Action] {
        guard case .idle = state else { return [] }
        guard let key else {
            return write(hello(), on: .plaintext()) { .awaitingHelloResponse($0) }
        }
        do {
            var handshake = try NoiseHandshake(role: .initiator, preSharedKey: key)
            let first = try handshake.writeMessage()
            state = .awaitingServerHello(NoiseFrameDecoder(), handshake)
            // An empty frame (the client hello), then the handshake frame.
            return [.write(try NoiseFrameDecoder.encode([]) + NoiseFrameDecoder.encode(NoiseHandshakeFrames.handshake(first)))]
        } catch let error as NoiseError {
            return fail(.noise(error))
        } catch {
            return fail(.protocolViolation("\(error)"))
        }
    }

    /// Bytes read from the socket.
    public mutating func received(_ bytes: [UInt8]) -> [Action] {
        var actions: [Action] = []
        var pending = bytes
        while true {
            switch state {
            case .idle, .closed:
                return actions
            case .awaitingServerHello(var decoder, let handshake):
                decoder.append(pending)
                pending = []
                do {
                    guard let frame = try decoder.next() else { state = .awaitingServerHello(decoder, handshake); return actions }
                    let hello = try NoiseHandshakeFrames.parseServerHello(frame)
                    if let expectedName, let name = hello.name, name != expectedName {
                        return actions + fail(.nameMismatch(expected: expectedName, got: name))
                    }
                    state = .awaitingHandshake(decoder, handshake)
                } catch {
                    return actions + fail(error == .plaintextPeer ? .proxyHasNoKey : .frame(error))
                }
            case .awaitingHandshake(var decoder, var handshake):
                decoder.append(pending)
                pending = []
                do {
                    guard let frame = try decoder.next() else { state = .awaitingHandshake(decoder, handshake); return actions }
                    switch try NoiseHandshakeFrames.parseHandshake(frame) {
                    case .failure(let reason):
                        return actions + fail(reason == NoiseHandshakeFrames.macFailure ? .wrongKey : .handshakeFailed(reason))
                    case .message(let message):
                        _ = try handshake.readMessage(message)
                    }
                    let transport = APITransport.noise(decoder, try handshake.transport())
                    actions += write(hello(), on: transport) { .awaitingHelloResponse($0) }
                } catch let error as APIFrameError {
                    return actions + fail(.frame(error))
                } catch let error as NoiseError {
                    return actions + fail(error == .authenticationFailed ? .wrongKey : .noise(error))
                } catch {
                    return actions + fail(.protocolViolation("\(error)"))
                }
            case .awaitingHelloResponse(var transport), .awaitingDeviceInfo(var transport, _), .ready(var transport):
                transport.append(pending)
                pending = []
                let message: APIMessage
                do {
                    guard let next = try transport.next() else { keep(transport); return actions }
                    message = next
                } catch {
                    return actions + fail(error)
                }
                actions += handle(message, transport)
            }
        }
    }

    /// A message for the proxy; refused (no bytes) until the connection is ready.
    public mutating func send(_ message: APIMessage) -> [Action] {
        guard case .ready(let transport) = state else { return [] }
        return write(message, on: transport) { .ready($0) }
    }

    /// Called every keep-alive interval (aioesphomeapi's is 20 s): a ping, or — when nothing at all came back since the
    /// last one — the end of a connection whose proxy stopped answering (an ESP32 that rebooted or left the network
    /// leaves a socket that never errors).
    public mutating func keepAliveTick() -> [Action] {
        guard case .ready(let transport) = state else { return [] }
        guard !pingOutstanding else { return fail(.protocolViolation("the proxy did not answer a ping within a keep-alive interval")) }
        pingOutstanding = true
        return write(APIMessage(type: APIMessageType.pingRequest.rawValue, payload: []), on: transport) { .ready($0) }
    }

    /// Ends the connection politely (a `DisconnectRequest`); the caller closes the socket after writing it.
    public mutating func disconnect() -> [Action] {
        guard case .ready(let transport) = state else { state = .closed; return [] }
        return write(APIMessage(type: APIMessageType.disconnectRequest.rawValue, payload: []), on: transport) { _ in .closed }
    }

    private mutating func handle(_ message: APIMessage, _ transport: APITransport) -> [Action] {
        let current = state
        pingOutstanding = false
        switch (state, APIMessageType(rawValue: message.type)) {
        case (_, .pingResponse?):
            keep(transport)
            return []
        case (_, .pingRequest?):
            return write(APIMessage(type: APIMessageType.pingResponse.rawValue, payload: []), on: transport) {
                Self.replacingTransport(in: current, with: $0)
            }
        case (_, .disconnectRequest?):
            let answer = write(APIMessage(type: APIMessageType.disconnectResponse.rawValue, payload: []), on: transport) { _ in .closed }
            return answer + fail(.disconnectedByPeer)
        case (.awaitingHelloResponse, .helloResponse?):
            guard let response = try? HelloResponse(serializedBytes: message.payload) else {
                return fail(.protocolViolation("a HelloResponse that does not decode"))
            }
            guard response.apiVersionMajor <= 1 else {
                return fail(.incompatibleVersion(major: response.apiVersionMajor, minor: response.apiVersionMinor))
            }
            if let expectedName, !response.name.isEmpty, response.name != expectedName {
                return fail(.nameMismatch(expected: expectedName, got: response.name))
            }
            return write(APIMessage(type: APIMessageType.deviceInfoRequest.rawValue, payload: []), on: transport) {
                .awaitingDeviceInfo($0, response)
            }
        case (.awaitingDeviceInfo(_, let hello), .deviceInfoResponse?):
            guard let info = try? DeviceInfoResponse(serializedBytes: message.payload) else {
                return fail(.protocolViolation("a DeviceInfoResponse that does not decode"))
            }
            state = .ready(transport)
            return [.ready(ProxyIdentity(name: info.name, macAddress: info.macAddress, bluetoothMacAddress: info.bluetoothMacAddress,
                                         esphomeVersion: info.esphomeVersion, model: info.model,
                                         apiVersion: (hello.apiVersionMajor, hello.apiVersionMinor),
                                         features: BluetoothProxyFeatures(rawValue: info.bluetoothProxyFeatureFlags)))]
        case (.ready, _):
            keep(transport)
            return [.deliver(message)]
        default:
            // Before ready, anything else (a log line, a state) is not for us yet; it is dropped.
            keep(transport)
            return []
        }
    }

    /// Stores `transport` back into the current state (its decoder and counters moved on).
    private mutating func keep(_ transport: APITransport) {
        state = Self.replacingTransport(in: state, with: transport)
    }

    private static func replacingTransport(in state: State, with transport: APITransport) -> State {
        switch state {
        case .awaitingHelloResponse: .awaitingHelloResponse(transport)
        case .awaitingDeviceInfo(_, let hello): .awaitingDeviceInfo(transport, hello)
        case .ready: .ready(transport)
        default: state
        }
    }

    private func hello() -> APIMessage {
        var hello = HelloRequest()
        hello.clientInfo = clientInfo
        hello.apiVersionMajor = Self.apiVersion.major
        hello.apiVersionMinor = Self.apiVersion.minor
        // A message of set fields always serializes.
        return APIMessage(type: APIMessageType.helloRequest.rawValue, payload: try! hello.serializedBytes())
    }

    /// `message` written on `transport`; the state becomes `next` of the transport that wrote it.
    private mutating func write(_ message: APIMessage, on transport: APITransport, next: (APITransport) -> State) -> [Action] {
        var transport = transport
        do {
            let bytes = try transport.encode(message)
            state = next(transport)
            return [.write(bytes)]
        } catch {
            return fail(error)
        }
    }

    private mutating func fail(_ error: APIConnectionError) -> [Action] {
        state = .closed
        return [.close(error)]
    }
}
