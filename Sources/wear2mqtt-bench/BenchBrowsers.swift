import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization

/// Browsers open on the gateway's web interface during a run (issue 40: the gateway's CPU per sample with two
/// browsers open against none): each is a WebSocket client speaking the page's protocol (docs/frontend.md) that
/// subscribes to every topic under the base — a page showing every device at once, the most a browser can ask —
/// and reads each frame as it comes, counting the messages and the drops the gateway reports in `status` frames.
/// Their own CPU is the bench's, not the gateway's.
final class BenchBrowsers: Sendable {
    struct Counts: Sendable {
        var frames = 0
        var messages = 0
        /// The gateway's count of messages it dropped for this browser (its last `status` frame).
        var dropped = 0
    }

    private let counts: Mutex<[Counts]>
    private let readers: Mutex<[Task<Void, Never>]> = Mutex([])

    private init(count: Int) {
        counts = Mutex(Array(repeating: Counts(), count: count))
    }

    /// Each browser's counts so far.
    var snapshot: [Counts] { counts.withLock { $0 } }

    /// Opens `count` browsers on `port` and returns once each has had its `hello` and subscribed to `filter`.
    static func open(count: Int, port: Int, filter: String) async throws -> BenchBrowsers {
        let browsers = BenchBrowsers(count: count)
        for index in 0..<count {
            let channel = try await connect(port: port)
            let subscribed = AsyncStream.makeStream(of: Void.self)
            let reader = Task<Void, Never> {
                _ = try? await channel.executeThenClose { inbound, outbound in
                    let subscribe = #"{"type":"subscribe","topics":["\#(filter)"]}"#
                    try await outbound.write(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(),
                                                            data: ByteBuffer(string: subscribe)))
                    subscribed.continuation.yield()
                    for try await frame in inbound {
                        guard frame.opcode == .text else {
                            if frame.opcode == .connectionClose { return }
                            continue
                        }
                        var data = frame.unmaskedData
                        let bytes = data.readBytes(length: data.readableBytes) ?? []
                        let fields = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
                        browsers.counts.withLock { counts in
                            counts[index].frames += 1
                            counts[index].messages += (fields?["messages"] as? [Any])?.count ?? 0
                            if let dropped = fields?["dropped"] as? Int { counts[index].dropped = dropped }
                        }
                    }
                }
            }
            browsers.readers.withLock { $0.append(reader) }
            for await _ in subscribed.stream { break }
        }
        return browsers
    }

    func close() async {
        let tasks = readers.withLock { readers in
            defer { readers = [] }
            return readers
        }
        for task in tasks {
            task.cancel()
            await task.value
        }
    }

    private enum Upgrade: Sendable {
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused
    }

    private static func connect(port: Int) async throws -> NIOAsyncChannel<WebSocketFrame, WebSocketFrame> {
        let upgrade: EventLoopFuture<Upgrade> = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    // A `messages` frame carries up to 256 KiB (BrowserFeed.frameBytes).
                    let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: 1 << 22) { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            .websocket(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
                        }
                    }
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: "127.0.0.1:\(port)")
                    let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/api/ws", headers: headers)
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
                        upgradeRequestHead: head, upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in channel.eventLoop.makeCompletedFuture { .refused } })
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                        configuration: .init(upgradeConfiguration: configuration))
                }
            }
        switch try await upgrade.get() {
        case .websocket(let channel): return channel
        case .refused: throw BenchError("the web interface on port \(port) refused the WebSocket")
        }
    }
}
