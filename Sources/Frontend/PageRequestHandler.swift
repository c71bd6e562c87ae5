import NIOCore
import NIOHTTP1

/// Answers the web interface's plain HTTP requests: the embedded files, a redirect to the base with its `/`, and
/// refusals in words. A WebSocket upgrade never reaches it unless it was refused (origin, or not an upgrade).
final class PageRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let basePath: String
    private let origins: OriginRule
    private let secure: Bool
    /// What `GET <base>/health` answers; nil: there is no such page.
    private let health: (@Sendable () -> HealthReport)?
    private var request: HTTPRequestHead?

    init(basePath: String, origins: OriginRule, secure: Bool, health: (@Sendable () -> HealthReport)? = nil) {
        self.basePath = basePath
        self.origins = origins
        self.secure = secure
        self.health = health
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): request = head
        case .body: break
        case .end:
            guard let head = request else { return }
            request = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard head.method == .GET || head.method == .HEAD else {
            return send(.methodNotAllowed, text: "only GET and HEAD\n", head: head, context: context, extra: [("Allow", "GET, HEAD")])
        }
        switch PageRoute(path: head.uri, basePath: basePath) {
        case .asset(let name):
            guard let asset = Asset.all[name] else { return send(.notFound, text: "no such page\n", head: head, context: context) }
            if head.headers["If-None-Match"].contains(asset.entityTag) {
                return send(.notModified, body: nil, contentType: nil, head: head, context: context, extra: [("ETag", asset.entityTag)])
            }
            send(.ok, body: asset.bytes, contentType: asset.contentType, head: head, context: context,
                 extra: [("ETag", asset.entityTag), ("Cache-Control", "no-cache")])
        case .addSlash:
            // Under Home Assistant's ingress the browser's path starts with the prefix the proxy took off.
            let ingress = head.headers.first(name: "X-Ingress-Path").flatMap { PageRoute.isPathPrefix($0) ? $0 : nil } ?? ""
            send(.movedPermanently, text: "", head: head, context: context, extra: [("Location", ingress + basePath + "/")])
        case .webSocket:
            let origin = head.headers.first(name: "Origin"), host = head.headers.first(name: "Host")
            if !origins.allows(origin: origin, host: host, secure: secure) {
                send(.forbidden, text: "the WebSocket does not accept pages from \(origin ?? "")\n", head: head, context: context)
            } else {
                send(.badRequest, text: "this address is the web interface's WebSocket; open the page instead\n", head: head, context: context)
            }
        case .health:
            guard let report = health?() else { return send(.notFound, text: "no such page\n", head: head, context: context) }
            send(report.healthy ? .ok : .serviceUnavailable, body: report.json, contentType: "application/json", head: head,
                 context: context, extra: [("Cache-Control", "no-store")])
        case .notFound:
            send(.notFound, text: "no such page\n", head: head, context: context)
        }
    }

    private func send(_ status: HTTPResponseStatus, text: String, head: HTTPRequestHead, context: ChannelHandlerContext,
                      extra: [(String, String)] = []) {
        send(status, body: Array(text.utf8), contentType: "text/plain; charset=utf-8", head: head, context: context, extra: extra)
    }

    private func send(_ status: HTTPResponseStatus, body: [UInt8]?, contentType: String?, head: HTTPRequestHead,
                      context: ChannelHandlerContext, extra: [(String, String)]) {
        var headers = HTTPHeaders(Self.securityHeaders + extra)
        if let contentType { headers.add(name: "Content-Type", value: contentType) }
        headers.add(name: "Content-Length", value: "\(body?.count ?? 0)")
        let keepAlive = head.isKeepAlive
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        if let body, head.method != .HEAD, !body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive { done.assumeIsolated().whenComplete { [context] _ in context.close(promise: nil) } }
    }

    /// The page loads only its own files and talks only to its own WebSocket; Home Assistant's ingress frames it from
    /// the same origin, which `frame-ancestors 'self'` allows.
    static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy",
         "default-src 'self'; connect-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
            + "object-src 'none'; base-uri 'none'; frame-ancestors 'self'"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
    ]
}
