/// The frames around the Noise handshake, as ESPHome's API server and aioesphomeapi exchange them:
///
/// - the client opens with an empty frame (`01 00 00`) and a handshake frame;
/// - the server answers its hello: the chosen protocol (`0x01`, NNpsk0), its name and — since 2023 — its MAC
///   address, each ended by a zero byte;
/// - a handshake frame is `0x00` and the Noise message, or `0x01` and the reason it failed (`Handshake MAC failure`:
///   a wrong key).
public enum NoiseHandshakeFrames {
    public static let noiseProtocol: UInt8 = 0x01
    /// What the server says when the client's first message does not authenticate with its key.
    public static let macFailure = "Handshake MAC failure"

    public struct ServerHello: Equatable, Sendable {
        public var name: String?
        public var macAddress: String?

        public init(name: String?, macAddress: String?) {
            self.name = name
            self.macAddress = macAddress
        }
    }

    public enum Handshake: Equatable, Sendable {
        case message([UInt8])
        case failure(String)
    }

    public static func serverHello(_ hello: ServerHello) -> [UInt8] {
        var bytes = [noiseProtocol]
        if let name = hello.name {
            bytes += Array(name.utf8) + [0]
            if let mac = hello.macAddress { bytes += Array(mac.utf8) + [0] }
        }
        return bytes
    }

    public static func parseServerHello(_ frame: [UInt8]) throws(APIFrameError) -> ServerHello {
        guard let chosen = frame.first else { throw .badHandshake("the server's hello is empty") }
        guard chosen == noiseProtocol else { throw .badHandshake("the server chose protocol \(chosen), not Noise NNpsk0 (1)") }
        // Fields after the protocol byte, each ended by a zero; older servers send none.
        let fields = frame.dropFirst().split(separator: 0, omittingEmptySubsequences: false).dropLast()
        let text = fields.map { String(decoding: $0, as: UTF8.self) }
        return ServerHello(name: text.first, macAddress: text.dropFirst().first)
    }

    public static func handshake(_ message: [UInt8]) -> [UInt8] { [0x00] + message }

    public static func failure(_ reason: String) -> [UInt8] { [0x01] + Array(reason.utf8) }

    public static func parseHandshake(_ frame: [UInt8]) throws(APIFrameError) -> Handshake {
        switch frame.first {
        case 0x00: return .message(Array(frame.dropFirst()))
        case 0x01: return .failure(String(decoding: frame.dropFirst(), as: UTF8.self))
        case let other?: throw .badHandshake("a handshake frame starts with 0 or 1, not \(other)")
        case nil: throw .badHandshake("the handshake frame is empty")
        }
    }
}
