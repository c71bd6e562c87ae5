import EventLoop
import Foundation
import Glibc
import MQTT
import Synchronization
import Testing
import Wear2MQTTTesting

/// The client corks its broker socket (TCP_CORK) while libmosquitto writes an iteration's packets and uncorks it
/// after. A socket left corked would hold every later write up to the kernel's 200 ms: each iteration's end is
/// checked from outside, on the socket the client holds to the broker's port. The burst is QoS 1, which libmosquitto
/// sends (QoS 0 samples leave in one `send` of the client's own: `DirectWritesTests`).
@Suite
struct CorkedWritesTests {
    @Test func aBurstOfOneIterationArrivesWholeAndInOrderAndNoIterationEndsCorked() async throws {
        try await withSubscribedClient(to: "test/burst", qos: .atMostOnce) { client, clients, broker, messages in
            let socket = try #require(Self.socket(connectedToPort: broker.port), "no socket of this process to the broker")
            // Every iteration's end, after the client's own flush (hooks run in the order they were added): corked or not.
            let endsCorked = Mutex(0), ends = Mutex(0)
            let loop = clients.loop
            loop.execute {
                _ = loop.whenIterationEnds {
                    ends.withLock { $0 += 1 }
                    if Self.isCorked(socket) { endsCorked.withLock { $0 += 1 } }
                }
            }
            let count = 200
            // One task, so one iteration: all of them leave in the flush at its end.
            loop.execute {
                for index in 0..<count { client.publish(OutgoingMessage(topic: "test/burst", text: "\(index)", qos: .atLeastOnce)) }
            }
            var received: [String] = []
            while received.count < count, let message = await messages.next() {
                if message.topic == "test/burst" { received.append(message.text) }
            }
            #expect(received == (0..<count).map { "\($0)" })
            await clients.barrier()
            #expect(ends.withLock { $0 } > 0)
            #expect(endsCorked.withLock { $0 } == 0, "an iteration ended with the broker socket corked")
        }
    }

    static func isCorked(_ socket: Int32) -> Bool {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(socket, Int32(IPPROTO_TCP), TCP_CORK, &value, &length) == 0 && value != 0
    }

    /// A /proc file read to its end (its size is 0 to stat, so it is read until `read` returns nothing).
    static func procFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(descriptor, &chunk, chunk.count)
            guard count > 0 else { return count == 0 ? String(decoding: bytes, as: UTF8.self) : nil }
            bytes += chunk[0..<count]
        }
    }

    /// The descriptor of this process's TCP socket connected to 127.0.0.1:`port` (the client's, the only one).
    static func socket(connectedToPort port: Int) -> Int32? {
        // /proc/net/tcp: "sl local_address rem_address st … inode", addresses as hex "IP:PORT".
        guard let table = procFile("/proc/self/net/tcp") else { return nil }
        let inodes = Set(table.split(separator: "\n").dropFirst().compactMap { line -> String? in
            let fields = line.split(separator: " ")
            guard fields.count > 9, let remote = fields[2].split(separator: ":").last,
                  Int(remote, radix: 16) == port, fields[3] == "01" else { return nil }
            return String(fields[9])
        })
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        for entry in entries {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)"),
                  target.hasPrefix("socket:["), inodes.contains(String(target.dropFirst(8).dropLast())) else { continue }
            return Int32(entry)
        }
        return nil
    }
}
