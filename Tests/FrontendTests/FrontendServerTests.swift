import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Gateway
import Logging
import Testing
import Wear2MQTTTesting

@testable import Frontend

/// The HTTP side on a real socket (the WebSocket is driven by a real browser in Tests/browser/run).
@Suite("Web interface server over HTTP")
struct FrontendServerTests {
    /// Runs a server on a free loopback port under `basePath` for `body`, then stops it.
    func withServer(basePath: String = "/", heartbeat: DataPathHeartbeat? = nil, _ body: (Int) async throws -> Void) async throws {
        let port = try FreePort.loopback()
        var section = Configuration.FrontendSection()
        section.enabled = true
        section.listen = "127.0.0.1:\(port)"
        section.basePath = basePath
        let feed = BrowserFeed(greeting: .init(baseTopic: "wear2mqtt", gatewayID: "t", version: "0"), token: nil, brokerConnected: { true })
        let (listening, told) = AsyncStream.makeStream(of: Void.self)
        let server = FrontendServer(section: section, feed: feed, heartbeat: heartbeat, logger: Logger(label: "frontend-test"),
                                    listening: { told.yield() })
        let task = Task { try await server.run() }
        defer { task.cancel() }
        for await _ in listening { break }
        try await body(port)
    }

    func get(_ url: String, headers: [String: String] = [:], method: String = "GET") async throws -> (Data, HTTPURLResponse) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        return (data, try #require(response as? HTTPURLResponse))
    }

    /// A redirect as the server sent it.
    final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
        func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
            completionHandler(nil)
        }
    }

    static func unfollowed(_ url: String, headers: [String: String] = [:]) async throws -> HTTPURLResponse {
        let session = URLSession(configuration: .ephemeral, delegate: NoRedirects(), delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: URL(string: url)!)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return try #require(try await session.data(for: request).1 as? HTTPURLResponse)
    }

    @Test("the page and its files, with their types, a tag, and the security headers")
    func assets() async throws {
        try await withServer { port in
            let (page, response) = try await get("http://127.0.0.1:\(port)/")
            #expect(response.statusCode == 200)
            #expect(Array(page) == Asset.all["index.html"]?.bytes)
            #expect(response.value(forHTTPHeaderField: "Content-Type") == "text/html; charset=utf-8")
            #expect(response.value(forHTTPHeaderField: "Content-Security-Policy")?.contains("script-src 'self'") == true)
            #expect(response.value(forHTTPHeaderField: "X-Content-Type-Options") == "nosniff")
            let (_, script) = try await get("http://127.0.0.1:\(port)/pages/device.js")
            #expect(script.value(forHTTPHeaderField: "Content-Type") == "text/javascript; charset=utf-8")
            let tag = try #require(script.value(forHTTPHeaderField: "ETag"))
            let (again, cached) = try await get("http://127.0.0.1:\(port)/pages/device.js", headers: ["If-None-Match": tag])
            #expect(cached.statusCode == 304)
            #expect(again.isEmpty)
        }
    }

    @Test("refusals in words: unknown pages 404, other methods 405, a WebSocket address fetched as a page 400, a foreign origin 403")
    func refusals() async throws {
        try await withServer { port in
            #expect(try await get("http://127.0.0.1:\(port)/../Package.swift").1.statusCode == 404)
            #expect(try await get("http://127.0.0.1:\(port)/nothing.js").1.statusCode == 404)
            let (_, post) = try await get("http://127.0.0.1:\(port)/", method: "POST")
            #expect(post.statusCode == 405)
            #expect(post.value(forHTTPHeaderField: "Allow") == "GET, HEAD")
            #expect(try await get("http://127.0.0.1:\(port)/api/ws").1.statusCode == 400)
            #expect(try await get("http://127.0.0.1:\(port)/api/ws", headers: ["Origin": "http://evil.example"]).1.statusCode == 403)
        }
    }

    @Test("health: 200 while the data-path loop beats, 503 once it stalled, under the base path; none without a heartbeat")
    func health() async throws {
        let heartbeat = DataPathHeartbeat(interval: .seconds(2), stalledAfter: .seconds(10))
        try await withServer(basePath: "/wear2mqtt", heartbeat: heartbeat) { port in
            let (stalled, before) = try await get("http://127.0.0.1:\(port)/wear2mqtt/health")
            #expect(before.statusCode == 503)
            #expect(String(decoding: stalled, as: UTF8.self) == #"{"status":"stalled","data_path":"stalled","broker":"connected"}"#)
            heartbeat.beat()
            let (ok, after) = try await get("http://127.0.0.1:\(port)/wear2mqtt/health")
            #expect(after.statusCode == 200)
            #expect(after.value(forHTTPHeaderField: "Content-Type") == "application/json")
            #expect(String(decoding: ok, as: UTF8.self) == #"{"status":"ok","data_path":"running","broker":"connected"}"#)
            #expect(try await get("http://127.0.0.1:\(port)/health").1.statusCode == 404)
        }
        try await withServer { port in
            let (_, response) = try await get("http://127.0.0.1:\(port)/health")
            #expect(response.statusCode == 404)
        }
    }

    @Test("under a base path: the base without / is sent to base/, and only paths under it are served")
    func basePath() async throws {
        try await withServer(basePath: "/wear2mqtt") { port in
            // Not followed (Foundation on Linux drops the final / of the target and loops): the answer itself is checked.
            let redirect = try await Self.unfollowed("http://127.0.0.1:\(port)/wear2mqtt")
            #expect(redirect.statusCode == 301)
            #expect(redirect.value(forHTTPHeaderField: "Location") == "/wear2mqtt/")
            let ingress = try await Self.unfollowed("http://127.0.0.1:\(port)/wear2mqtt", headers: ["X-Ingress-Path": "/api/hassio_ingress/t0k"])
            #expect(ingress.value(forHTTPHeaderField: "Location") == "/api/hassio_ingress/t0k/wear2mqtt/")
            let forged = try await Self.unfollowed("http://127.0.0.1:\(port)/wear2mqtt", headers: ["X-Ingress-Path": "//evil.example"])
            #expect(forged.value(forHTTPHeaderField: "Location") == "/wear2mqtt/")
            let (page, response) = try await get("http://127.0.0.1:\(port)/wear2mqtt/")
            #expect(response.statusCode == 200)
            #expect(Array(page) == Asset.all["index.html"]?.bytes)
            #expect(try await get("http://127.0.0.1:\(port)/wear2mqtt/app.css").1.statusCode == 200)
            #expect(try await get("http://127.0.0.1:\(port)/app.css").1.statusCode == 404)
        }
    }
}
