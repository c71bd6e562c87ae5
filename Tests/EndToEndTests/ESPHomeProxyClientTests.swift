import ESPHome
import EventLoop
import Foundation
import Testing
import Wear2MQTTTesting

/// The gateway's `ProxyClient` against `wear2mqtt-sim proxy` in another process, over TCP: ready with the proxy's
/// identity (plaintext and encrypted), back by itself after the proxy is killed and started again, and a wrong key
/// reported in words and retried with a growing delay — never given up, never a crash.
@Suite struct ESPHomeProxyClientTests {
    static let key = (0..<32).map { UInt8($0 * 3 + 2) }

    /// The client's events, in order.
    final class Events: Sendable {
        let stream: AsyncStream<ProxyClient.Event>
        let continuation: AsyncStream<ProxyClient.Event>.Continuation
        init() { (stream, continuation) = AsyncStream.makeStream() }
    }

    static func proxy(port: Int, in directory: TemporaryDirectory, key: [UInt8]?, name: String = "bench-proxy",
                      run: Int = 0) async throws -> ChildProcess {
        let executable = URL(fileURLWithPath: GatewayProcess.executablePath).deletingLastPathComponent().appendingPathComponent("wear2mqtt-sim").path
        let proxy = try ChildProcess(executable: executable,
                                     arguments: ["proxy", "--port", "\(port)", "--name", name]
                                        + (key.map { ["--key", Data($0).base64EncodedString()] } ?? []),
                                     outputPath: directory.file("proxy\(run).out"), errorPath: directory.file("proxy\(run).err"))
        #expect(try await proxy.waitForErrorOutput(timeout: .seconds(60)) { $0.contains("serving ESPHome's API") })
        return proxy
    }

    /// The next event `matching`, or nil after 60 s (a hang guard, not a timing assertion).
    static func next(_ iterator: inout AsyncStream<ProxyClient.Event>.Iterator,
                     _ matching: (ProxyClient.Event) -> Bool) async -> ProxyClient.Event? {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            guard let event = await iterator.next() else { return nil }
            if matching(event) { return event }
        }
        return nil
    }

    static func isReady(_ event: ProxyClient.Event) -> Bool { if case .ready = event { true } else { false } }
    static func isDisconnected(_ event: ProxyClient.Event) -> Bool { if case .disconnected = event { true } else { false } }

    @Test("ready with the proxy's identity, plaintext and encrypted; back by itself after the proxy is killed and restarted",
          arguments: [false, true])
    func readyAndReconnect(encrypted: Bool) async throws {
        let directory = try TemporaryDirectory(prefix: "proxy-client")
        defer { directory.remove() }
        let port = try FreePort.loopback()
        let key = encrypted ? Self.key : nil
        var proxy = try await Self.proxy(port: port, in: directory, key: key)
        let loop = try EventLoop.started(name: "proxy-client-test")
        defer { loop.stop() }
        let events = Events()
        var settings = ProxyClient.Settings(name: "kitchen", host: "127.0.0.1", port: port, key: key)
        settings.backoff = ReconnectBackoff(first: .milliseconds(100), maximum: .milliseconds(400))
        let client = ProxyClient(settings, loop: loop) { events.continuation.yield($0) }
        client.start()
        var iterator = events.stream.makeAsyncIterator()

        guard case .ready(let identity)? = await Self.next(&iterator, Self.isReady) else { Issue.record("never ready"); return }
        #expect(identity.name == "bench-proxy")
        #expect(identity.features.isSuperset(of: .required))

        proxy.signal(SIGKILL)
        await proxy.waitForExit()
        guard case .disconnected(let reason, _)? = await Self.next(&iterator, Self.isDisconnected) else { Issue.record("no disconnect"); return }
        #expect(reason.contains("closed") || reason.contains("reading"), "\(reason)")
        proxy = try await Self.proxy(port: port, in: directory, key: key, run: 1)
        #expect(await Self.next(&iterator, Self.isReady) != nil, "not back after the proxy returned")

        client.stop()
        await proxy.stop()
    }

    @Test("a wrong key is reported in words and retried with a growing delay")
    func wrongKey() async throws {
        let directory = try TemporaryDirectory(prefix: "proxy-client-key")
        defer { directory.remove() }
        let port = try FreePort.loopback()
        let proxy = try await Self.proxy(port: port, in: directory, key: Self.key)
        let loop = try EventLoop.started(name: "proxy-client-key-test")
        defer { loop.stop() }
        let events = Events()
        var settings = ProxyClient.Settings(name: "kitchen", host: "127.0.0.1", port: port, key: [UInt8](repeating: 1, count: 32))
        settings.backoff = ReconnectBackoff(first: .milliseconds(50), maximum: .seconds(1))
        let client = ProxyClient(settings, loop: loop) { events.continuation.yield($0) }
        client.start()
        var iterator = events.stream.makeAsyncIterator()
        var delays: [Duration] = []
        for _ in 0..<3 {
            guard case .disconnected(let reason, let delay)? = await Self.next(&iterator, Self.isDisconnected) else {
                Issue.record("no refusal"); return
            }
            #expect(reason.contains("encryption key"), "\(reason)")
            delays.append(delay)
        }
        #expect(delays == [.milliseconds(50), .milliseconds(100), .milliseconds(200)])
        client.stop()
        #expect(proxy.isRunning)
        await proxy.stop()
    }
}
