import Testing

@testable import Frontend

@Suite("Web interface routes: base paths, the WebSocket, and names that lead nowhere")
struct PageRouteTests {
    @Test("at the root", arguments: [
        ("/", PageRoute.asset("index.html")), ("", .asset("index.html")), ("/app.js", .asset("app.js")),
        ("/pages/device.js", .asset("pages/device.js")), ("/api/ws", .webSocket), ("/api/ws?x=1", .webSocket),
        ("/health", .health), ("/health?probe=1", .health),
        ("/?v=2", .asset("index.html")), ("/../etc/passwd", .asset("../etc/passwd")), ("x", .notFound),
    ])
    func root(path: String, route: PageRoute) {
        #expect(PageRoute(path: path, basePath: "/") == route)
    }

    @Test("under a base path a proxy does not strip", arguments: [
        ("/wear2mqtt", PageRoute.addSlash), ("/wear2mqtt/", .asset("index.html")), ("/wear2mqtt/app.css", .asset("app.css")),
        ("/wear2mqtt/api/ws", .webSocket), ("/wear2mqtt/health", .health), ("/health", .notFound),
        ("/wear2mqttx/app.css", .notFound), ("/app.css", .notFound), ("/", .notFound),
    ])
    func based(path: String, route: PageRoute) {
        #expect(PageRoute(path: path, basePath: "/wear2mqtt") == route)
    }

    @Test("a name outside the table is no asset: traversal and encodings name nothing")
    func traversal() {
        for path in ["/../etc/passwd", "/%2e%2e/etc/passwd", "/pages/../app.js", "/index.html/", "//app.js"] {
            guard case .asset(let name) = PageRoute(path: path, basePath: "/") else { continue }
            #expect(Asset.all[name] == nil, "\(path) served \(name)")
        }
    }

    @Test("an ingress prefix goes into a redirect only when it is a plain path")
    func ingressPrefix() {
        #expect(PageRoute.isPathPrefix("/api/hassio_ingress/abc-DEF_123"))
        for forged in ["//evil.example", "https://evil.example", "/a\r\nSet-Cookie: x", "/a/", "", "a/b", "/a b"] {
            #expect(!PageRoute.isPathPrefix(forged), "\(forged)")
        }
    }

    @Test("origins: the page's own, listed ones, and none (a script); others are refused")
    func origins() {
        let rule = OriginRule(allowedOrigins: ["https://ha.example.org"])
        #expect(rule.allows(origin: nil, host: "127.0.0.1:8780", secure: false))
        #expect(rule.allows(origin: "http://127.0.0.1:8780", host: "127.0.0.1:8780", secure: false))
        #expect(rule.allows(origin: "HTTP://Gateway.local:8780", host: "gateway.local:8780", secure: false))
        #expect(rule.allows(origin: "https://ha.example.org", host: "10.0.0.2:8780", secure: false))
        #expect(!rule.allows(origin: "https://127.0.0.1:8780", host: "127.0.0.1:8780", secure: false))
        #expect(!rule.allows(origin: "http://evil.example", host: "127.0.0.1:8780", secure: false))
        #expect(!rule.allows(origin: "http://127.0.0.1:8780", host: nil, secure: false))
        #expect(!rule.allows(origin: "null", host: "127.0.0.1:8780", secure: false))
    }
}
