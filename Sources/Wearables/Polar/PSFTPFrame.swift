/// One "RFC76" air packet of Polar's file transfer (PSFTP): a header byte, then up to MTU − 1 bytes of a message.
///
/// The header (`polarofficial/polar-ble-sdk` Android `psftp/BlePsFtpUtils.kt`, `buildRfc76MessageFrame` and
/// `processRfc76MessageFrameHeader`; iOS `BlePsFtpUtility.swift`, whose tests spell the bits out): bit 0 is 0 on a
/// message's first frame and 1 on the others, bits 1–2 the status (3 more follow, 1 last, 0 error or response),
/// bit 3 reserved, bits 4–7 the sequence number (0 on the first frame, counting up and wrapping after 15).
/// A status-0 frame carries a 16-bit little-endian code (`PSFTPErrorCode`; 0 is success) or nothing, which the
/// iOS tests call an interrupt. The SDK sends `00 00 00` to cancel a transfer.
///
/// Stricter than the SDK, so that `decode(encode(x)) == x`: a set reserved bit, status 2 (which the SDK calls
/// "undefined") and a status-0 frame of other than 0 or 2 bytes after the header are refused.
public struct PSFTPFrame: Sendable, Hashable {
    public enum Content: Sendable, Hashable {
        /// Part of a message; more frames follow.
        case more([UInt8])
        /// The message's last part (may be empty: a message of nothing is one header-only frame).
        case last([UInt8])
        /// The device's answer without a message: 0 is success, anything else a `PSFTPErrorCode`.
        case code(UInt16)
        /// A status-0 frame with no code (the SDK's iOS tests' "interrupt frame").
        case interrupted
    }

    /// False on a message's first frame (the header's bit 0 clear).
    public var isContinuation: Bool
    /// 0…15.
    public var sequenceNumber: UInt8
    public var content: Content

    public init(isContinuation: Bool, sequenceNumber: UInt8, content: Content) {
        self.isContinuation = isContinuation
        self.sequenceNumber = sequenceNumber & 0x0F
        self.content = content
    }

    /// The SDK's cancel packet: a first frame of status 0 and code 0.
    public static let cancel = PSFTPFrame(isContinuation: false, sequenceNumber: 0, content: .code(0))

    public func encode() -> [UInt8] {
        let status: UInt8
        let body: [UInt8]
        switch content {
        case .more(let payload): (status, body) = (3, payload)
        case .last(let payload): (status, body) = (1, payload)
        case .code(let code): (status, body) = (0, [UInt8(code & 0xFF), UInt8(code >> 8)])
        case .interrupted: (status, body) = (0, [])
        }
        return [sequenceNumber << 4 | status << 1 | (isContinuation ? 1 : 0)] + body
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> PSFTPFrame {
        guard let header = bytes.first else { throw .truncated(expected: 1, actual: 0) }
        guard header & 0x08 == 0 else { throw .reservedValue(field: "PSFTP frame header bit 3", value: Int(header)) }
        let body = Array(bytes.dropFirst())
        let content: Content
        switch (header >> 1) & 0x03 {
        case 3: content = .more(body)
        case 1: content = .last(body)
        case 0:
            switch body.count {
            case 0: content = .interrupted
            case 1: throw .truncated(expected: 3, actual: bytes.count)
            case 2: content = .code(UInt16(body[0]) | UInt16(body[1]) << 8)
            default: throw .outOfRange(field: "PSFTP error frame length", value: bytes.count)
            }
        default: throw .reservedValue(field: "PSFTP frame status", value: 2)
        }
        return PSFTPFrame(isContinuation: header & 0x01 == 1, sequenceNumber: header >> 4, content: content)
    }

    /// A message cut into frames for an ATT payload of `mtu` bytes (at least 2: the header and one byte), numbered
    /// from 0: full frames while more than `mtu − 1` bytes remain, then the rest as the last frame (the SDK's
    /// `buildRfc76MessageFrameAll`). Requests, queries and the device's responses are all framed this way.
    public static func split(_ message: [UInt8], mtu: Int) throws(GATTCodecError) -> [PSFTPFrame] {
        guard mtu >= 2 else { throw .outOfRange(field: "PSFTP MTU", value: mtu) }
        let chunk = mtu - 1
        var frames: [PSFTPFrame] = []
        var offset = 0
        repeat {
            let remaining = message.count - offset
            let content: Content = remaining > chunk ? .more(Array(message[offset..<offset + chunk])) : .last(Array(message[offset...]))
            frames.append(PSFTPFrame(isContinuation: offset > 0, sequenceNumber: UInt8(frames.count % 16), content: content))
            offset += min(remaining, chunk)
        } while offset < message.count
        return frames
    }
}
