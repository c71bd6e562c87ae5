import EventLoop
import Foundation
import Glibc
import MQTT
import Synchronization
import Testing
import Wear2MQTTTesting

/// The MQTT client on a shared event loop (the daemon's data path) must never hold that loop.
@Suite
struct MQTTClientLoopTests {
    /// A loopback listener whose accept queue is full: the kernel drops further SYNs, so a connect to it hangs
    /// (as to a broker host that does not answer) instead of being refused.
    func silentListener() throws -> (listener: Int32, filler: Int32, port: Int) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                guard bind(listener, raw, length) == 0, listen(listener, 0) == 0, getsockname(listener, raw, &length) == 0 else {
                    throw POSIXError(.EADDRINUSE)
                }
            }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        // One connection fills the queue of a backlog-0 listener; nobody accepts it.
        let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, length) }
        }
        return (listener, filler, port)
    }

    @Test("a broker that does not answer the connect leaves the shared loop free for samples")
    func hangingConnectDoesNotHoldTheLoop() async throws {
        let (listener, filler, port) = try silentListener()
        defer { close(filler); close(listener) }
        let clients = try ClientLoop(name: "test-data-path")
        let loop = clients.loop
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let client = try clients.client(MQTTClientConfiguration(host: "127.0.0.1", port: port, clientID: "hang-test",
                                                                spoolDirectory: directory.file("spool")))
        // Published before the start, taken in by the client's first step on the loop, the one that starts the
        // connect: once they are counted, the connect is under way (and hanging).
        for _ in 0..<5 { client.publish(OutgoingMessage(topic: "test/sample", payload: Array("{}".utf8))) }
        let run = Task { try await client.run() }
        defer { run.cancel() }
        #expect(await clients.until { client.statistics.offlineQueued == 5 }, "the loop ran the client's first step")
        // Work submitted to the loop while the connect hangs runs at once; a blocked loop would not run it for the
        // minute or more a kernel retries SYNs (the waits' 20 s guards stay well below that).
        let ran = Mutex(0)
        for _ in 0..<5 {
            loop.execute { ran.withLock { $0 += 1 } }
            client.publish(OutgoingMessage(topic: "test/sample", payload: Array("{}".utf8)))
        }
        #expect(await clients.until { ran.withLock { $0 } == 5 })
        // A task after the publishes has run once they were taken in.
        await clients.barrier()
        #expect(!client.statistics.connected)
        #expect(client.statistics.offlineQueued == 10, "samples wait in the ring while the broker is away")
    }
}
