import Foundation
import SwiftProtobuf
import Testing

@testable import ESPHome

/// The client and server state machines talking to each other in memory, with and without encryption, whole and byte
/// by byte: hello, device info, pings, messages both ways, a polite disconnect; and every mismatch a user can make (a
/// wrong key, a key on one side only, another proxy's name) ends with the reason that names it.
@Suite("ESPHome: client and server connections")
struct APIConnectionTests {
    static let key = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

    static func deviceInfo(features: BluetoothProxyFeatures = [.passiveScan, .activeConnections, .remoteCaching, .rawAdvertisements]) -> DeviceInfoResponse {
        var info = DeviceInfoResponse()
        info.name = "proxy-kitchen"
        info.macAddress = "AA:BB:CC:00:11:22"
        info.bluetoothMacAddress = "AA:BB:CC:00:11:24"
        info.esphomeVersion = "2026.11.0"
        info.model = "esp32dev"
        info.bluetoothProxyFeatureFlags = features.rawValue
        return info
    }

    /// Both sides, and what each reported besides bytes.
    struct Pair {
        var client: APIClientStateMachine
        var server: APIServerStateMachine
        var clientEvents: [APIClientStateMachine.Action] = []
        var serverEvents: [APIServerStateMachine.Action] = []
        /// Bytes go across in pieces of this size (nil: whole writes).
        var chunk: Int?

        init(clientKey: [UInt8]?, serverKey: [UInt8]?, expectedName: String? = nil, chunk: Int? = nil) throws {
            client = APIClientStateMachine(key: clientKey, clientInfo: "wear2mqtt-test", expectedName: expectedName)
            server = try APIServerStateMachine(key: serverKey, deviceInfo: APIConnectionTests.deviceInfo())
            self.chunk = chunk
        }

        mutating func toServer(_ actions: [APIClientStateMachine.Action]) {
            for action in actions {
                guard case .write(let bytes) = action else { clientEvents.append(action); continue }
                for piece in pieces(bytes) { toClient(server.received(piece)) }
            }
        }

        mutating func toClient(_ actions: [APIServerStateMachine.Action]) {
            for action in actions {
                guard case .write(let bytes) = action else { serverEvents.append(action); continue }
                for piece in pieces(bytes) { toServer(client.received(piece)) }
            }
        }

        func pieces(_ bytes: [UInt8]) -> [[UInt8]] {
            guard let chunk else { return [bytes] }
            return stride(from: 0, to: bytes.count, by: chunk).map { Array(bytes[$0..<min($0 + chunk, bytes.count)]) }
        }

        var identity: APIClientStateMachine.ProxyIdentity? {
            clientEvents.lazy.compactMap { if case .ready(let identity) = $0 { identity } else { nil } }.first
        }
        var clientClose: APIConnectionError? {
            clientEvents.lazy.compactMap { if case .close(let error) = $0 { error } else { nil } }.first
        }
        var serverClose: APIConnectionError? {
            serverEvents.lazy.compactMap { if case .close(let error) = $0 { error } else { nil } }.first
        }
    }

    @Test("hello and device info, plaintext and encrypted, whole and byte by byte", arguments: [
        (true, nil), (false, nil), (true, 1), (false, 1), (true, 7),
    ] as [(Bool, Int?)])
    func handshake(encrypted: Bool, chunk: Int?) throws {
        var pair = try Pair(clientKey: encrypted ? Self.key : nil, serverKey: encrypted ? Self.key : nil, expectedName: "proxy-kitchen", chunk: chunk)
        pair.toServer(pair.client.start())
        let identity = try #require(pair.identity, "\(pair.clientEvents) \(pair.serverEvents)")
        #expect(identity.name == "proxy-kitchen")
        #expect(identity.bluetoothMacAddress == "AA:BB:CC:00:11:24")
        #expect(identity.features.isSuperset(of: .required))
        #expect(identity.apiVersion == (1, 10))
        #expect(pair.serverEvents == [.clientHello("wear2mqtt-test")])
        #expect(pair.client.isReady && pair.server.isServing)

        // Both ways once ready: a request to the proxy, an answer to the client.
        let subscribe = APIMessage(type: APIMessageType.subscribeBluetoothLEAdvertisementsRequest.rawValue, payload: [0x08, 0x01])
        pair.toServer(pair.client.send(subscribe))
        #expect(pair.serverEvents.last == .deliver(subscribe))
        let free = APIMessage(type: APIMessageType.bluetoothConnectionsFreeResponse.rawValue, payload: [0x08, 0x03, 0x10, 0x03])
        pair.toClient(pair.server.send(free))
        #expect(pair.clientEvents.last == .deliver(free))

        // A ping from the proxy is answered by the client itself, and the answer is the server's business only.
        let ping = APIMessage(type: APIMessageType.pingRequest.rawValue, payload: [])
        pair.toClient(pair.server.send(ping))
        #expect(pair.clientEvents.last == .deliver(free), "the ping reached the radio")
        #expect(pair.serverEvents.last == .deliver(subscribe), "the ping's answer reached the proxy's radio")
        // The client's keep-alive: answered, so the next tick pings again instead of giving up.
        for _ in 0..<3 { pair.toServer(pair.client.keepAliveTick()) }
        #expect(pair.clientClose == nil)
        #expect(pair.serverEvents.last == .deliver(subscribe))

        // A polite goodbye ends both.
        pair.toServer(pair.client.disconnect())
        #expect(pair.serverClose == .disconnectedByPeer)
        #expect(pair.client.send(subscribe).isEmpty)
    }

    @Test("a wrong key: the proxy says Handshake MAC failure and both sides name the key")
    func wrongKey() throws {
        var pair = try Pair(clientKey: Self.key, serverKey: [UInt8](repeating: 9, count: 32))
        pair.toServer(pair.client.start())
        #expect(pair.clientClose == .wrongKey)
        #expect(pair.serverClose == .wrongKey)
        #expect(pair.identity == nil)
        #expect(pair.clientClose?.description.contains("encryption key") == true)
    }

    @Test("a key on the proxy only: the client is told the proxy requires encryption")
    func keyOnProxyOnly() throws {
        var pair = try Pair(clientKey: nil, serverKey: Self.key)
        pair.toServer(pair.client.start())
        #expect(pair.serverClose == .proxyHasNoKey || pair.serverClose != nil)
        #expect(pair.clientClose == .frame(.requiresEncryption))
        #expect(pair.clientClose?.description.contains("requires encryption") == true)
    }

    @Test("a key on the client only: the proxy refuses the encrypted hello")
    func keyOnClientOnly() throws {
        var pair = try Pair(clientKey: Self.key, serverKey: nil)
        pair.toServer(pair.client.start())
        #expect(pair.serverClose != nil)
        #expect(pair.identity == nil)
        // A plaintext proxy answering anything is read by the encrypted client as "no key on the proxy".
        var client = APIClientStateMachine(key: Self.key, clientInfo: "t")
        _ = client.start()
        #expect(client.received(PlaintextFrameDecoder.encode(APIMessage(type: 2, payload: []))) == [.close(.proxyHasNoKey)])
    }

    @Test("another proxy's name ends the connection before any Bluetooth request", arguments: [true, false])
    func nameMismatch(encrypted: Bool) throws {
        var pair = try Pair(clientKey: encrypted ? Self.key : nil, serverKey: encrypted ? Self.key : nil, expectedName: "proxy-hall")
        pair.toServer(pair.client.start())
        #expect(pair.clientClose == .nameMismatch(expected: "proxy-hall", got: "proxy-kitchen"))
        #expect(pair.identity == nil)
    }

    @Test("a proxy that stops answering is given up after one keep-alive interval without a byte")
    func silentProxy() throws {
        var pair = try Pair(clientKey: Self.key, serverKey: Self.key)
        pair.toServer(pair.client.start())
        #expect(pair.identity != nil)
        let first = pair.client.keepAliveTick()   // written, but the proxy is gone: nothing comes back
        #expect(first.count == 1)
        guard case .close(let error)? = pair.client.keepAliveTick().first else { Issue.record("not closed"); return }
        #expect(error.description.contains("did not answer a ping"))
        #expect(pair.client.keepAliveTick().isEmpty)
    }

    @Test("the proxy asking to disconnect is answered and ends the client; an API 2 proxy is refused")
    func peerEnds() throws {
        var pair = try Pair(clientKey: nil, serverKey: nil)
        pair.toServer(pair.client.start())
        #expect(pair.identity != nil)
        let bye = pair.client.received(PlaintextFrameDecoder.encode(APIMessage(type: APIMessageType.disconnectRequest.rawValue, payload: [])))
        #expect(bye.count == 2)
        #expect(bye.last == .close(.disconnectedByPeer))

        var client = APIClientStateMachine(key: nil, clientInfo: "t")
        _ = client.start()
        var future = HelloResponse()
        future.apiVersionMajor = 2
        let answer = client.received(PlaintextFrameDecoder.encode(APIMessage(type: 2, payload: try future.serializedBytes())))
        #expect(answer == [.close(.incompatibleVersion(major: 2, minor: 0))])
    }

    @Test("the server refuses requests before hello, and garbage ends either side with a reason, never a crash", arguments: 0..<3)
    func garbage(seed: UInt64) throws {
        var server = try APIServerStateMachine(key: nil, deviceInfo: Self.deviceInfo())
        let early = server.received(PlaintextFrameDecoder.encode(APIMessage(type: APIMessageType.deviceInfoRequest.rawValue, payload: [])))
        #expect(early.count == 1)
        if case .close = early[0] {} else { Issue.record("answered before hello: \(early)") }

        var generator = SplitMix(seed: seed)
        for _ in 0..<200 {
            let bytes = (0..<Int(generator.next() % 80)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            var client = APIClientStateMachine(key: generator.next() % 2 == 0 ? Self.key : nil, clientInfo: "t")
            _ = client.start()
            _ = client.received(bytes)
            var encrypted = try APIServerStateMachine(key: Self.key, deviceInfo: Self.deviceInfo())
            _ = encrypted.received(bytes)
            var plain = try APIServerStateMachine(key: nil, deviceInfo: Self.deviceInfo())
            _ = plain.received(bytes)
        }
    }
}
