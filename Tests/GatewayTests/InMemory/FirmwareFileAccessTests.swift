import Firmware
import Foundation
@testable import Gateway
import SimulatedWearables
import Testing
import Wear2MQTTTesting
import Wearables

/// Issue 24: what `request/dfu` and `bridge/request/firmware/list` may do to the file system and tell about it. A
/// FIFO in `dfu.dir` once froze the whole gateway (its open waits for a writer); a mismatch answer named the
/// file's real SHA-256; errors told whether a path outside `dfu.dir` existed.
@Suite("Gateway in memory: file access of firmware requests")
struct FirmwareFileAccessTests {
    static let strap = "C0:FF:EE:00:00:01"
    static let package = DFUPackageBuilder.application(firmware: [UInt8](repeating: 0x5A, count: 4096), firmwareVersion: 20200)

    static func sha256(_ bytes: [UInt8]) -> String { DFUPackageFile.sha256(of: bytes) }

    /// A gateway with a streaming strap and `dfu.dir` as `prepare` leaves it.
    static func started(_ prepare: (TemporaryDirectory) throws -> Void) async throws -> (GatewayHarness, TemporaryDirectory) {
        let folder = try TemporaryDirectory(prefix: "wear2mqtt-dfu-files")
        try prepare(folder)
        let gateway = try GatewayHarness(configuration: """
        devices:
          - address: "\(strap)"
            driver: standard
            name: strap
        dfu:
          dir: \(folder.path)
          max_mb: 1
        allow:
          dfu: true
        """)
        try gateway.addDevice("heart_rate_strap", address: strap, options: ["rate_hz": .int(5)])
        await gateway.start()
        #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("strap/sensor/heart_rate")?["bpm"]?.integer != nil })
        return (gateway, folder)
    }

    static func dfu(_ gateway: GatewayHarness, file: String, sha256: String = sha256(package)) async -> [String: DeviceValue]? {
        await gateway.request("strap/request/dfu", #"{"file":"\#(file)","sha256":"\#(sha256)"}"#)
    }

    static func error(_ answer: [String: DeviceValue]?) -> (code: String?, message: String) {
        (answer?["error"]?["code"]?.text, answer?["error"]?["message"]?.text ?? "")
    }

    @Test("a FIFO, a folder and a file too large named by request/dfu get a clear error at once while samples keep flowing")
    func specialFilesAreRefusedWithoutStalling() async throws {
        let (gateway, folder) = try await Self.started { folder in
            #expect(mkfifo(folder.file("pipe.zip"), 0o644) == 0)
            try FileManager.default.createDirectory(atPath: folder.file("folder.zip"), withIntermediateDirectories: false)
            try Data(count: 1_100_000).write(to: URL(fileURLWithPath: folder.file("big.zip")))
            try FileManager.default.createSymbolicLink(atPath: folder.file("latest.zip"), withDestinationPath: "pipe.zip")
        }
        await withStopping(gateway, { await $0.stop(); folder.remove() }) { gateway in
            let samplesBefore = gateway.all("strap/sensor/heart_rate").count

            for name in ["pipe.zip", "latest.zip", "folder.zip"] {
                let (code, message) = Self.error(await Self.dfu(gateway, file: name))
                #expect(code == "INVALID_VALUE", "\(name)")
                #expect(message.contains("not a regular file") && message.contains("nothing was sent"), "\(name): \(message)")
            }
            let (code, message) = Self.error(await Self.dfu(gateway, file: "big.zip"))
            #expect(code == "INVALID_VALUE" && message.contains("more than the limit"), "\(message)")

            // The catalog lists the FIFO with its reason instead of reading it.
            let list = await gateway.request("bridge/request/firmware/list")
            let entries = list?["data"]?["packages"]?.list ?? []
            let pipe = entries.first { $0["file"]?.text == "pipe.zip" }
            #expect(pipe?["error"]?.text?.contains("not a regular file") == true, "\(String(describing: list))")

            // Samples go on: more arrive after the refusals, and the strap never left.
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.all("strap/sensor/heart_rate").count >= samplesBefore + 5 })
            #expect(gateway.last("strap")?["connection"]?.text == "connected")
        }
    }

    @Test("a wrong SHA-256 answers \"does not match\" without the file's digest; outside names read like missing ones")
    func errorsDiscloseNothing() async throws {
        let outside = try TemporaryDirectory(prefix: "wear2mqtt-outside")
        defer { outside.remove() }
        try Data(Self.package).write(to: URL(fileURLWithPath: outside.file("secret.zip")))
        let (gateway, folder) = try await Self.started { folder in
            try Data(Self.package).write(to: URL(fileURLWithPath: folder.file("band.zip")))
            try FileManager.default.createSymbolicLink(atPath: folder.file("existing.zip"), withDestinationPath: outside.file("secret.zip"))
            try FileManager.default.createSymbolicLink(atPath: folder.file("absent.zip"), withDestinationPath: outside.file("none.zip"))
        }
        await withStopping(gateway, { await $0.stop(); folder.remove() }) { gateway in

            let wrong = String(repeating: "ab", count: 32)
            let mismatch = Self.error(await Self.dfu(gateway, file: "band.zip", sha256: wrong))
            #expect(mismatch.code == "INVALID_VALUE" && mismatch.message.contains("does not match"), "\(mismatch.message)")
            #expect(!mismatch.message.contains(Self.sha256(Self.package)), "\(mismatch.message)")

            // A link out to a file that exists, one to nothing, and a plain missing name: the same answer but the name.
            var seen: Set<String> = []
            for name in ["existing.zip", "absent.zip", "missing.zip"] {
                let (code, message) = Self.error(await Self.dfu(gateway, file: name))
                #expect(code == "INVALID_VALUE", "\(name)")
                seen.insert(message.replacingOccurrences(of: name, with: "NAME"))
            }
            #expect(seen.count == 1, "\(seen)")
            #expect(seen.first?.contains(outside.path) == false)
        }
    }

    @Test("a file access that blocks is answered after the limit; one that does not, with its value")
    func blockedAccessIsBounded() async throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let reader = ends[0], writer = ends[1]
        defer {
            close(writer)
            close(reader)
        }
        // A read of a pipe nobody writes to blocks like a hung file system; closing the writer releases it.
        let blocked = await FileAccessOffLoop.run(within: .milliseconds(50)) { () -> Int in
            var byte: UInt8 = 0
            return read(reader, &byte, 1)
        }
        #expect(blocked == .failure(.timedOut(.milliseconds(50))))
        let quick = await FileAccessOffLoop.run(within: .seconds(60)) { 42 }
        #expect(quick == .success(42))
        #expect(write(writer, [1], 1) == 1)
    }
}
