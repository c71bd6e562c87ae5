import Gateway
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import ServiceLifecycle

/// Serves the web interface (docs/frontend.md) as a service of the daemon's `ServiceGroup`: the embedded page over
/// HTTP/1.1 and its WebSocket on swift-nio, one event-loop thread made when the service runs (none when
/// `frontend.enabled` is false). What the WebSocket carries is the `BrowserFeed`'s business; this is transport.
public struct FrontendServer: Service {
    private let section: Configuration.FrontendSection
    private let feed: BrowserFeed
    /// HTTPS when `frontend.tls` is set (loaded before the service starts, so a bad file stops the start).
    private let tls: TLSServerContext?
    private let logger: Logger
    /// How often a browser gets what accumulated: about every 50 ms, 20 frames a second at most.
    private let tick: TimeAmount
    /// Told once the socket listens (tests wait for it instead of polling).
    private let listening: @Sendable () -> Void
    /// The data-path loop's beat, answered at `<base>/health`; nil: no such page.
    private let heartbeat: DataPathHeartbeat?

    public init(section: Configuration.FrontendSection, feed: BrowserFeed, tls: TLSServerContext? = nil,
                heartbeat: DataPathHeartbeat? = nil, logger: Logger,
                tick: TimeAmount = .milliseconds(50), listening: @escaping @Sendable () -> Void = {}) {
        self.section = section
        self.feed = feed
        self.tls = tls
        self.heartbeat = heartbeat
        self.logger = logger
        self.tick = tick
        self.listening = listening
    }

    /// Cannot listen on the configured address.
    public struct BindError: Error, CustomStringConvertible {
        public var description: String
    }

    static let pageHandlerName = "wear2mqtt.page"
    /// A request's 64 KiB and its frame.
    static let maximumFrameBytes = 128 * 1024

    private static func healthReport(_ feed: BrowserFeed) -> (DataPathHeartbeat) -> @Sendable () -> HealthReport {
        { heartbeat in { HealthReport(dataPathRunning: heartbeat.isBeating(), brokerConnected: feed.isBrokerConnected) } }
    }

    public func run() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let feed = self.feed, tick = self.tick, basePath = section.basePath, tls = self.tls, secure = tls != nil
        let origins = OriginRule(allowedOrigins: section.allowedOrigins)
        let health = heartbeat.map(Self.healthReport(feed))
        let webSocketPath = (basePath == "/" ? "" : basePath) + "/" + PageRoute.webSocketPath
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 64)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    let page = PageRequestHandler(basePath: basePath, origins: origins, secure: secure, health: health)
                    let upgrader = NIOWebSocketServerUpgrader(
                        maxFrameSize: Self.maximumFrameBytes,
                        shouldUpgrade: { channel, head in
                            let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
                            let allowed = path == webSocketPath && origins.allows(
                                origin: head.headers.first(name: "Origin"), host: head.headers.first(name: "Host"), secure: secure)
                            return channel.eventLoop.makeSucceededFuture(allowed ? HTTPHeaders() : nil)
                        },
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(
                                    NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 1, maxAccumulatedFrameCount: 64,
                                                                maxAccumulatedFrameSize: Self.maximumFrameBytes))
                                try channel.pipeline.syncOperations.addHandler(BrowserSocketHandler(feed: feed, tick: tick))
                            }
                        })
                    return channel.eventLoop.makeCompletedFuture {
                        if let tls { try channel.pipeline.syncOperations.addHandler(TLSServerHandler(context: tls)) }
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                            withServerUpgrade: (upgraders: [upgrader], completionHandler: { context in
                                context.pipeline.removeHandler(name: Self.pageHandlerName, promise: nil)
                            }))
                        try channel.pipeline.syncOperations.addHandler(page, name: Self.pageHandlerName)
                    }
                }
                .bind(host: section.endpoint.host, port: section.endpoint.port).get()
        } catch {
            try? await group.shutdownGracefully()
            throw BindError(description: "frontend.listen: cannot listen on \(section.listen): \(error)")
        }
        logger.info("serving the web interface", metadata: ["listen": "\(section.listen)", "base_path": "\(basePath)",
                                                            "scheme": "\(secure ? "https" : "http")",
                                                            "token": "\(section.authToken == nil ? "none" : "required")",
                                                            "trusted_proxies": "\(section.trustedProxies.joined(separator: ","))"])
        listening()
        await withGracefulShutdownHandler {
            try? await channel.closeFuture.get()
        } onGracefulShutdown: {
            channel.close(promise: nil)
        }
        feed.finish()
        try? await group.shutdownGracefully()
    }
}
