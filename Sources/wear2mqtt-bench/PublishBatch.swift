/// The MQTT 3.1.1 packets the floor relay writes, encoded by hand into one buffer per loop iteration: every PUBLISH
/// of the iteration goes to the broker in one `write`. QoS 0, so a PUBLISH is only its fixed header, the topic and the
/// payload (MQTT 3.1.1 §3.3); nothing comes back to acknowledge.
struct PublishBatch {
    private(set) var bytes: [UInt8] = []
    private(set) var count = 0

    init(capacity: Int = 64 * 1024) { bytes.reserveCapacity(capacity) }

    /// Appends one QoS 0 PUBLISH of `payload` to `topic` (its UTF-8 bytes, at most 65,535).
    mutating func append(topic: [UInt8], payload: UnsafeRawBufferPointer) {
        bytes.append(0x30)
        Self.appendRemainingLength(2 + topic.count + payload.count, to: &bytes)
        bytes.append(UInt8(topic.count >> 8))
        bytes.append(UInt8(topic.count & 0xFF))
        bytes.append(contentsOf: topic)
        bytes.append(contentsOf: payload)
        count += 1
    }

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        count = 0
    }

    /// CONNECT with a clean session and no keep-alive (the relay sends nothing but PUBLISH, so no PINGREQ is due).
    static func connect(clientID: String) -> [UInt8] {
        let id = Array(clientID.utf8)
        var variable: [UInt8] = [0, 4] + Array("MQTT".utf8) + [4, 0x02, 0, 0]
        variable += [UInt8(id.count >> 8), UInt8(id.count & 0xFF)] + id
        var packet: [UInt8] = [0x10]
        appendRemainingLength(variable.count, to: &packet)
        return packet + variable
    }

    /// The variable-length "remaining length" of MQTT's fixed header: 7 bits a byte, the high bit saying more follow.
    static func appendRemainingLength(_ length: Int, to bytes: inout [UInt8]) {
        var remaining = length
        repeat {
            var byte = UInt8(remaining & 0x7F)
            remaining >>= 7
            if remaining > 0 { byte |= 0x80 }
            bytes.append(byte)
        } while remaining > 0
    }
}
