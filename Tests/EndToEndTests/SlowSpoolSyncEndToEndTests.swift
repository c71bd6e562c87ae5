import Foundation
import Testing
import Wear2MQTTTesting

/// Issue 43: the durable spool on a slow card. An `LD_PRELOAD` shim, compiled here, makes every `fdatasync` of the
/// gateway process take 200 ms (and names the thread that called it). While a GoFIT history sync spools durable records,
/// a heart-rate strap streams at 50 Hz on the same data-path loop: its samples must keep arriving with no gap anywhere
/// near 200 ms (the fdatasync runs on the spool's own thread), and every record of the history must arrive.
@Suite
struct SlowSpoolSyncEndToEndTests {
    static let strap = "C0:FF:EE:00:00:61"
    static let stallMilliseconds = 200

    static let shimSource = """
    #define _GNU_SOURCE
    #include <dlfcn.h>
    #include <fcntl.h>
    #include <pthread.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>
    #include <time.h>
    #include <unistd.h>

    /* fdatasync as a slow SD card does it: SLOW_FDATASYNC_MS more, then the real one. Each call appends the calling
       thread's name to SLOW_FDATASYNC_LOG. */
    int fdatasync(int fd) {
        static int (*real)(int);
        if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
        const char *log = getenv("SLOW_FDATASYNC_LOG");
        if (log) {
            char name[32] = "?", line[40];
            pthread_getname_np(pthread_self(), name, sizeof name);
            int out = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
            if (out >= 0) {
                int length = snprintf(line, sizeof line, "%s\\n", name);
                (void)!write(out, line, (size_t)length);
                close(out);
            }
        }
        const char *text = getenv("SLOW_FDATASYNC_MS");
        long milliseconds = text ? atol(text) : 200;
        struct timespec left = { milliseconds / 1000, (milliseconds % 1000) * 1000000L };
        while (nanosleep(&left, &left) != 0) {}
        return real(fd);
    }
    """

    /// Compiles the shim into `directory` with the system's C compiler.
    static func buildShim(in directory: TemporaryDirectory) async throws -> String {
        let source = try directory.write("slow_fdatasync.c", shimSource)
        let library = directory.file("slow_fdatasync.so")
        let compiler = try ChildProcess(executable: "/usr/bin/cc", arguments: ["-shared", "-fPIC", "-O1", "-o", library, source, "-ldl"],
                                        outputPath: directory.file("cc.out"), errorPath: directory.file("cc.err"))
        let status = await compiler.waitForExit(timeout: .seconds(60))
        if status == nil { compiler.signal(SIGKILL) }
        guard status == 0 else { throw TestSetupError("cc failed: \(compiler.errorOutput)") }
        return library
    }

    @Test func samplesKeepFlowingWhileEachFdatasyncTakes200msAndEveryRecordArrives() async throws {
        let shimDirectory = try TemporaryDirectory()
        defer { shimDirectory.remove() }
        let shim = try await Self.buildShim(in: shimDirectory)
        let syncLog = shimDirectory.file("fdatasync.log")
        let environment = ["LD_PRELOAD": shim, "SLOW_FDATASYNC_MS": String(Self.stallMilliseconds), "SLOW_FDATASYNC_LOG": syncLog]
        try await GatewayProcess.$extraEnvironment.withValue(environment) {
            try await Stack.with(scenarioDevices: GoFITEndToEndTests.scenario(options: "{ history_days: 1 }") + """

              - kind: heart_rate_strap
                address: \(Self.strap)
                advertising_interval: 100ms
                options: { rate_hz: 50 }
            """, configuredDevices: GoFITEndToEndTests.configuredDevices + "\n  - address: \(Self.strap)\n    name: strap\n") { stack in
                try await run(stack, syncLog: syncLog)
            }
        }
    }

    private func run(_ stack: Stack, syncLog: String) async throws {
        // Arrival times at an independent subscriber, in Unix seconds with nanoseconds (mosquitto_sub's %U).
        let timing = try stack.witness(topics: ["\(stack.base)/strap/sensor/heart_rate"], arguments: ["-F", "%t %U"], name: "timing")
        func arrivals() -> [Double] { stack.payloads("strap/sensor/heart_rate", seenBy: timing).compactMap(Double.init) }
        try #require(await stack.until(timeout: .seconds(45)) { arrivals().count >= 50 }, "the strap never streamed")
        try await GoFITKillDuringSyncTests.pair(stack)
        let total = try #require(Int(try await stack.control.inspect(GoFITEndToEndTests.band)["history_records"] ?? ""))
        try #require(total > 100)

        var seen = RecordIDs()
        func distinctIDs() -> Int {
            for kind in GoFITKillDuringSyncTests.kinds { seen.read(stack.payloads("band/fitness/\(kind)"), from: kind) }
            return seen.ids.count
        }
        let syncsBefore = (try? String(contentsOfFile: syncLog, encoding: .utf8))?.split(separator: "\n").count ?? 0
        let from = Date().timeIntervalSince1970
        let started = ContinuousClock.now
        try await stack.request("band/request/sync", #"{"transaction":"s1"}"#)
        let answered = await stack.response("band/response/sync", transaction: "s1", timeout: .seconds(240))
        let until = Date().timeIntervalSince1970
        let took = ContinuousClock.now - started
        #expect(answered?["status"] as? String == "ok", "\(String(describing: answered)); gateway log: \(stack.gateway.child.errorOutput.suffix(1500))")
        #expect(await stack.until(timeout: .seconds(60)) { distinctIDs() >= total }, "\(distinctIDs()) of \(total) records")

        // The strap's samples that arrived while the sync ran, and the longest wait between two of them.
        let during = arrivals().filter { $0 >= from && $0 <= until }
        let gaps = zip(during.dropFirst(), during).map { ($0 - $1) * 1000 }
        let longest = gaps.max() ?? .infinity
        let sorted = gaps.sorted()
        let p99 = sorted.isEmpty ? .infinity : sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
        let calls = ((try? String(contentsOfFile: syncLog, encoding: .utf8)) ?? "").split(separator: "\n").dropFirst(syncsBefore)
        let threads = Dictionary(grouping: calls, by: { String($0) }).mapValues(\.count)
        print("figure: GoFIT sync of \(total) records with every fdatasync \(Self.stallMilliseconds) ms: \(FaultBluetoothdKillTests.seconds(took)) s; strap at 50 Hz: \(during.count) samples meanwhile, longest gap \(String(format: "%.1f", longest)) ms, 99th percentile \(String(format: "%.1f", p99)) ms; fdatasync calls by thread: \(threads)")
        #expect(Double(during.count) >= (until - from) * 25, "the strap streamed at half its 50 Hz at least while the sync ran")
        #expect(!calls.isEmpty, "the shim slowed no fdatasync: it was not loaded")
        #expect(Set(threads.keys) == ["spool-sync"], "fdatasync ran off the spool's sync thread: \(threads)")
        // Were the loop waiting for the disk, every fdatasync while the strap streamed would leave a gap as long as the
        // stall; a loaded machine (the suite on 2 cores) may leave the odd one, not one per sync.
        let stalls = gaps.filter { $0 >= Double(Self.stallMilliseconds) }.count
        #expect(stalls <= calls.count / 4, "\(stalls) gaps of \(Self.stallMilliseconds) ms or more in \(calls.count) fdatasyncs (longest \(longest) ms)")
    }
}
