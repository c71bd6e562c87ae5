/// The client's side of the bus's SASL handshake (D-Bus specification, "Authentication Protocol"), with the one
/// mechanism a local Unix socket needs: EXTERNAL, the kernel vouching for our user id. As libdbus does, the
/// credentials byte (a NUL) goes first and the user id is the initial response, its decimal digits hex-encoded.
enum BusAuthentication {
    static func request(userID: UInt32) -> [UInt8] {
        let hex = String(userID).utf8.map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
        }.joined()
        return [0] + Array("AUTH EXTERNAL \(hex)\r\n".utf8)
    }

    /// Ends the handshake; the messages may follow in the same write.
    static let begin = Array("BEGIN\r\n".utf8)

    /// The server's answer line (without its CR LF): `OK <server guid>`, or a refusal.
    static func check(answer line: some Collection<UInt8>) throws(BusError) {
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("OK ") else {
            throw .connectionFailed("the bus refused EXTERNAL authentication: \(text.prefix(200))")
        }
    }
}
