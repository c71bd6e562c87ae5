/// Joins the frames of one PSFTP response (what the MTU characteristic notifies) into the message, or the
/// device's code. Pure: frames in, results out; the driver writes `PSFTPFrame.cancel` when this throws mid-message.
///
/// The checks are the SDK's `BlePsFtpClient.readResponse` (`polarofficial/polar-ble-sdk` Android
/// `psftp/BlePsFtpClient.kt`): sequence numbers start at 0 for every response and count up by one, wrapping after
/// 15 (a gap is "air packet lost", error 303 there); the first frame has bit 0 clear and every later one set ("stream
/// is out of sync"); a status-0 frame ends the response, with success (code 0: what came before it is the message)
/// or the device's error. After a whole message, a code or a throw the assembler starts over.
///
/// Not the SDK's: a message longer than `maximumLength` is refused rather than held without limit (the SDK has
/// none), and an interrupt frame (status 0 without a code) ends the response as `.interrupted`.
public struct PSFTPMessageAssembler: Sendable {
    public enum Output: Sendable, Equatable {
        /// A frame with more to come.
        case incomplete
        /// The whole message (empty for a request the device answered with code 0 alone).
        case message([UInt8])
        /// The device refused the request.
        case failed(PSFTPErrorCode)
        case interrupted
    }

    /// The SDK holds any length; 4 MiB is far more than an H10 stores (its exercise files are kilobytes).
    public static let defaultMaximumLength = 4 << 20

    public let maximumLength: Int
    private var received: [UInt8] = []
    private var nextSequenceNumber: UInt8 = 0
    private var inMessage = false

    public init(maximumLength: Int = PSFTPMessageAssembler.defaultMaximumLength) {
        self.maximumLength = maximumLength
    }

    public mutating func receive(_ bytes: [UInt8]) throws(GATTCodecError) -> Output {
        do {
            return try accept(try PSFTPFrame.decode(bytes))
        } catch {
            reset()
            throw error
        }
    }

    private mutating func accept(_ frame: PSFTPFrame) throws(GATTCodecError) -> Output {
        guard frame.sequenceNumber == nextSequenceNumber else {
            throw .outOfRange(field: "PSFTP sequence number (expected \(nextSequenceNumber))", value: Int(frame.sequenceNumber))
        }
        guard frame.isContinuation == inMessage else {
            throw .outOfRange(field: "PSFTP continuation bit (expected \(inMessage ? 1 : 0))", value: frame.isContinuation ? 1 : 0)
        }
        switch frame.content {
        case .more(let payload):
            try append(payload)
            nextSequenceNumber = (nextSequenceNumber + 1) & 0x0F
            inMessage = true
            return .incomplete
        case .last(let payload):
            try append(payload)
            return .message(finish())
        case .code(0):
            return .message(finish())
        case .code(let code):
            reset()
            return .failed(PSFTPErrorCode(rawValue: code))
        case .interrupted:
            reset()
            return .interrupted
        }
    }

    private mutating func append(_ payload: [UInt8]) throws(GATTCodecError) {
        guard received.count + payload.count <= maximumLength else {
            throw .outOfRange(field: "PSFTP message length", value: received.count + payload.count)
        }
        received += payload
    }

    private mutating func finish() -> [UInt8] {
        defer { reset() }
        return received
    }

    private mutating func reset() {
        received = []
        nextSequenceNumber = 0
        inMessage = false
    }
}
