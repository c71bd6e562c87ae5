import SwiftProtobuf

/// The proxy's side of one native-API connection, as a pure state machine: what ESPHome's API server does for a
/// Bluetooth proxy client, for the simulated proxy (and for tests of the client). Bytes in; bytes to write, the
/// client's Bluetooth requests, or the end out. Hello, device info, pings and disconnects are answered here.
public struct APIServerStateMachine: Sendable {
    public enum Action: Equatable, Sendable {
        case write([UInt8])
        /// The client said hello (its `client_info`).
        case clientHello(String)
        /// A request for the proxy's radio (subscribe advertisements, connect, GATT, free slots).
        case deliver(APIMessage)
        case close(APIConnectionError)
    }

    private enum State: Sendable {
        case awaitingClientHello(NoiseFrameDecoder, NoiseHandshake)
        case awaitingHandshake(NoiseFrameDecoder, NoiseHandshake)
        case awaitingHello(APITransport)
        case serving(APITransport)
        case closed
    }

    /// What ESPHome answers a client that speaks plaintext to an encrypted server.
    public static let badIndicator = "Bad indicator byte"

    private var state: State
    private let name: String
    private let macAddress: String
    private let deviceInfo: DeviceInfoResponse

    /// - Parameters:
    ///   - key: the 32-byte `api.encryption.key`; nil serves plaintext.
    ///   - deviceInfo: what `DeviceInfoRequest` is answered with (its name and MAC are also the server hello's).
    public init(key: [UInt8]?, deviceInfo: DeviceInfoResponse) throws(NoiseError) {
        self.deviceInfo = deviceInfo
        name = deviceInfo.name
        // The hello carries the MAC as ESPHome's get_mac_address() writes it: 12 lower-case hex digits, no colons.
        macAddress = deviceInfo.macAddress.lowercased().filter { $0 != ":" }
        if let key {
            state = .awaitingClientHello(NoiseFrameDecoder(), try NoiseHandshake(role: .responder, preSharedKey: key))
        } else {
            state = .awaitingHello(.plaintext())
        }
    }

    public var isServing: Bool {
        if case .serving = state { return true }
        return false
    }

    public mutating func received(_ bytes: [UInt8]) -> [Action] {
        var actions: [Action] = []
        var pending = bytes
        while true {
            switch state {
            case .closed:
                return actions
            case .awaitingClientHello(var decoder, let handshake):
                decoder.append(pending)
                pending = []
                do {
                    guard let frame = try decoder.next() else { state = .awaitingClientHello(decoder, handshake); return actions }
                    guard frame.isEmpty else { return actions + fail(.handshakeFailed("the client hello is not empty")) }
                    let hello = NoiseHandshakeFrames.serverHello(.init(name: name, macAddress: macAddress))
                    actions.append(.write(try NoiseFrameDecoder.encode(hello)))
                    state = .awaitingHandshake(decoder, handshake)
                } catch {
                    guard error == .plaintextPeer else { return actions + fail(.frame(error)) }
                    // A plaintext client: told in a frame it recognises as "encryption required".
                    let reject = (try? NoiseFrameDecoder.encode(NoiseHandshakeFrames.failure(Self.badIndicator))) ?? []
                    return actions + [.write(reject)] + fail(.proxyHasNoKey)
                }
            case .awaitingHandshake(var decoder, var handshake):
                decoder.append(pending)
                pending = []
                do {
                    guard let frame = try decoder.next() else { state = .awaitingHandshake(decoder, handshake); return actions }
                    guard case .message(let message) = try NoiseHandshakeFrames.parseHandshake(frame) else {
                        return actions + fail(.handshakeFailed("the client sent a failure frame"))
                    }
                    do {
                        _ = try handshake.readMessage(message)
                    } catch {
                        let reject = (try? NoiseFrameDecoder.encode(NoiseHandshakeFrames.failure(NoiseHandshakeFrames.macFailure))) ?? []
                        return actions + [.write(reject)] + fail(.wrongKey)
                    }
                    let answer = try handshake.writeMessage()
                    actions.append(.write(try NoiseFrameDecoder.encode(NoiseHandshakeFrames.handshake(answer))))
                    state = .awaitingHello(.noise(decoder, try handshake.transport()))
                } catch let error as APIFrameError {
                    return actions + fail(.frame(error))
                } catch let error as NoiseError {
                    return actions + fail(.noise(error))
                } catch {
                    return actions + fail(.protocolViolation("\(error)"))
                }
            case .awaitingHello(var transport), .serving(var transport):
                transport.append(pending)
                pending = []
                let message: APIMessage
                do {
                    guard let next = try transport.next() else { keep(transport); return actions }
                    message = next
                } catch {
                    if error == .frame(.requiresEncryption) { return actions + fail(.protocolViolation("the client speaks encryption; this proxy has no key")) }
                    return actions + fail(error)
                }
                actions += handle(message, transport)
            }
        }
    }

    /// A message for the client (advertisements, GATT answers, connection states); dropped before the client said hello.
    public mutating func send(_ message: APIMessage) -> [Action] {
        guard case .serving(let transport) = state else { return [] }
        return write([message], on: transport, next: State.serving)
    }

    private mutating func handle(_ message: APIMessage, _ transport: APITransport) -> [Action] {
        let serving: Bool
        if case .serving = state { serving = true } else { serving = false }
        switch APIMessageType(rawValue: message.type) {
        case .helloRequest?:
            let request = (try? HelloRequest(serializedBytes: message.payload)) ?? HelloRequest()
            var response = HelloResponse()
            response.apiVersionMajor = 1
            response.apiVersionMinor = 10
            response.serverInfo = "wear2mqtt-sim (ESPHome API)"
            response.name = name
            return [.clientHello(request.clientInfo)] + write([Self.message(.helloResponse, response)], on: transport, next: State.serving)
        case .pingRequest?:
            return write([APIMessage(type: APIMessageType.pingResponse.rawValue, payload: [])], on: transport,
                         next: serving ? State.serving : State.awaitingHello)
        case .disconnectRequest?:
            let answer = write([APIMessage(type: APIMessageType.disconnectResponse.rawValue, payload: [])], on: transport) { _ in .closed }
            return answer + fail(.disconnectedByPeer)
        case .pingResponse?:
            keep(transport)
            return []
        case _ where !serving:
            return fail(.protocolViolation("message \(message.type) before HelloRequest"))
        case .deviceInfoRequest?:
            return write([Self.message(.deviceInfoResponse, deviceInfo)], on: transport, next: State.serving)
        default:
            state = .serving(transport)
            return [.deliver(message)]
        }
    }

    private static func message(_ type: APIMessageType, _ body: some SwiftProtobuf.Message) -> APIMessage {
        // Messages built here from set fields always serialize.
        APIMessage(type: type.rawValue, payload: try! body.serializedBytes())
    }

    private mutating func keep(_ transport: APITransport) {
        switch state {
        case .awaitingHello: state = .awaitingHello(transport)
        case .serving: state = .serving(transport)
        default: break
        }
    }

    private mutating func write(_ messages: [APIMessage], on transport: APITransport, next: (APITransport) -> State) -> [Action] {
        var transport = transport
        do {
            var bytes: [UInt8] = []
            for message in messages { bytes += try transport.encode(message) }
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
