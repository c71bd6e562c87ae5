import SwiftProtobuf

extension APIMessage {
    /// `body` as the message of `type`. Generated messages of set fields always serialize.
    public init(_ type: APIMessageType, _ body: some SwiftProtobuf.Message) {
        self.init(type: type.rawValue, payload: try! body.serializedBytes())
    }

    /// A message with no fields (pings, requests that only name themselves).
    public init(_ type: APIMessageType) {
        self.init(type: type.rawValue, payload: [])
    }

    /// The payload read as `Body`; nil when it is not one.
    public func decoded<Body: SwiftProtobuf.Message>(as _: Body.Type) -> Body? {
        try? Body(serializedBytes: payload)
    }
}
