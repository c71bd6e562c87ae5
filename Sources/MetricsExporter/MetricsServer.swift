import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// Serves Prometheus's `GET /metrics` over HTTP/1.1 on swift-nio, as a service of the daemon's `ServiceGroup`.
///
/// It owns one NIO event-loop thread, made when the service runs and ended with it: a gateway that does not run
/// this service (`metrics.enabled: false`) has no NIO thread at all. It knows nothing of the gateway: `body` makes
/// each page. It answers other paths 404 and other methods 405; it has no TLS and no authentication (bind it to
/// loopback or a trusted network).
public struct MetricsServer: Service {
    public let host: String
    public let port: Int
    private let logger: Logger
    private let body: @Sendable () async -> [UInt8]

    public init(host: String, port: Int, logger: Logger, body: @escaping @Sendable () async -> [UInt8]) {
        self.host = host
        self.port = port
        self.logger = logger
        self.body = body
    }

    /// Cannot listen on `host:port`.
    public struct BindError: Error, CustomStringConvertible {
        public var description: String
    }

    public func run() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let body = self.body
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 16)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        try channel.pipeline.syncOperations.addHandler(MetricsRequestHandler(body: body))
                    }
                }
                .bind(host: host, port: port).get()
        } catch {
            try? await group.shutdownGracefully()
            throw BindError(description: "metrics.listen: cannot listen on \(host):\(port): \(error)")
        }
        logger.info("serving metrics", metadata: ["listen": "\(host):\(port)", "path": "/metrics"])
        await withGracefulShutdownHandler {
            try? await channel.closeFuture.get()
        } onGracefulShutdown: {
            channel.close(promise: nil)
        }
        try? await group.shutdownGracefully()
    }
}

/// One connection's requests, answered in order (NIO's pipeline handler holds back pipelined ones).
final class MetricsRequestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let body: @Sendable () async -> [UInt8]
    private var request: HTTPRequestHead?

    init(body: @escaping @Sendable () async -> [UInt8]) {
        self.body = body
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            request = head
        case .body:
            break
        case .end:
            guard let head = request else { return }
            request = nil
            let path = head.uri.split(separator: "?", maxSplits: 1).first ?? ""
            guard path == "/metrics" else {
                return respond(context, head, status: .notFound, bytes: Array("only /metrics is served here\n".utf8))
            }
            guard head.method == .GET || head.method == .HEAD else {
                return respond(context, head, status: .methodNotAllowed, bytes: [])
            }
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let body = self.body
            context.eventLoop.makeFutureWithTask { await body() }.whenSuccess { bytes in
                let (handler, context) = bound.value
                handler.respond(context, head, status: .ok, bytes: head.method == .HEAD ? [] : bytes,
                                contentType: "text/plain; version=0.0.4; charset=utf-8")
            }
        }
    }

    private func respond(_ context: ChannelHandlerContext, _ head: HTTPRequestHead, status: HTTPResponseStatus, bytes: [UInt8],
                         contentType: String = "text/plain; charset=utf-8") {
        var headers = HTTPHeaders([("content-type", contentType), ("content-length", "\(bytes.count)")])
        if status == .methodNotAllowed { headers.add(name: "allow", value: "GET, HEAD") }
        if !head.isKeepAlive { headers.add(name: "connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        if !bytes.isEmpty { context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: bytes)))), promise: nil) }
        let keepAlive = head.isKeepAlive
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            if !keepAlive { channel.close(promise: nil) }
        }
    }
}
