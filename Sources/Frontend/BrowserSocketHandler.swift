import Gateway
import NIOCore
import NIOWebSocket

/// One browser's WebSocket: its text frames go to the feed, and every `tick` what the feed holds for it goes out —
/// but only while the socket takes it: a tab that stops reading leaves its messages in the feed's bounded queue,
/// where they are dropped and counted, instead of in this process's memory or on the data path.
final class BrowserSocketHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let feed: BrowserFeed
    private let tick: TimeAmount
    private var id: Int?
    private var timer: Scheduled<Void>?

    init(feed: BrowserFeed, tick: TimeAmount) {
        self.feed = feed
        self.tick = tick
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let (id, first) = feed.open(peer: context.channel.remoteAddress?.ipAddress ?? "")
        self.id = id
        send(first, context: context)
        schedule(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) { finish() }

    func channelInactive(context: ChannelHandlerContext) {
        finish()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            guard let id else { return }
            var data = frame.unmaskedData
            let bytes = data.readBytes(length: data.readableBytes) ?? []
            for action in feed.receive(id, bytes) {
                switch action {
                case .send(let reply): send(reply, context: context)
                case .close(let code, _): close(code: code, context: context)
                }
            }
        case .ping:
            var data = frame.unmaskedData
            let payload = context.channel.allocator.buffer(bytes: data.readBytes(length: data.readableBytes) ?? [])
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: payload)), promise: nil)
        case .connectionClose:
            close(code: 1000, context: context)
        case .binary:
            send(Array(#"{"type":"error","message":"frames are JSON text, not binary"}"#.utf8), context: context)
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Sends what is due when the socket can take it, then waits a tick again.
    private func schedule(context: ChannelHandlerContext) {
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: tick) { [self] in
            guard let id, context.channel.isActive else { return }
            if context.channel.isWritable {
                let frames = feed.due(id)
                for frame in frames { context.write(wrapOutboundOut(textFrame(frame, context: context)), promise: nil) }
                if !frames.isEmpty { context.flush() }
            }
            schedule(context: context)
        }
    }

    private func send(_ bytes: [UInt8], context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(textFrame(bytes, context: context)), promise: nil)
    }

    private func textFrame(_ bytes: [UInt8], context: ChannelHandlerContext) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: .text, data: context.channel.allocator.buffer(bytes: bytes))
    }

    private func close(code: UInt16, context: ChannelHandlerContext) {
        var data = context.channel.allocator.buffer(capacity: 2)
        data.writeInteger(code)
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)))
            .assumeIsolated().whenComplete { [context] _ in context.close(promise: nil) }
        finish()
    }

    private func finish() {
        timer?.cancel()
        timer = nil
        if let id { feed.close(id) }
        id = nil
    }
}
