import Foundation
import FuzzTargets
import Testing
import Wear2MQTTTesting

/// Every input the fuzzers kept (`Tests/fuzz/corpus/<target>/`: the tests' vectors they were seeded with and
/// what libFuzzer added in the long runs of docs/reliability.md) goes through its target in every test run, so
/// an input that once crashed stays a regression test without a fuzzer build. Each target replays in a child
/// `wear2mqtt-fuzz` (the plain build's replayer), so a broken invariant — a trap — fails this test with the
/// input's name instead of ending the test process.
@Suite("Fuzz corpus replay")
struct FuzzCorpusReplayTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fuzz/corpus")

    static var replayer: String {
        let bundle = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: bundle).deletingLastPathComponent().appendingPathComponent("wear2mqtt-fuzz").path
    }

    static func inputs(of target: String) -> [String] {
        let folder = corpus.appendingPathComponent(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.sorted().map { folder.appendingPathComponent($0).path }
    }

    @Test("each target's corpus replays without a broken invariant", arguments: FuzzTarget.all.map(\.name))
    func replay(target name: String) async throws {
        let inputs = Self.inputs(of: name)
        #expect(inputs.count >= 10, "the \(name) corpus has \(inputs.count) inputs; seed it with Tests/fuzz/seed")
        let logs = try TemporaryDirectory(prefix: "wear2mqtt-fuzz-replay")
        defer { logs.remove() }
        let replay = try ChildProcess(executable: Self.replayer, arguments: [name] + inputs,
                                      outputPath: logs.file("out"), errorPath: logs.file("err"))
        // A hang guard only: the largest corpus replays in well under a second.
        let status = await replay.waitForExit(timeout: .seconds(120))
        if status == nil { await replay.stop() }
        let named = replay.errorOutput.split(separator: "\n").filter { $0.hasPrefix(Self.corpus.path) }
        #expect(status == 0, "\(name): stopped at \(named.last ?? "?"): \(replay.errorOutput.suffix(600))")
        #expect(named.count == inputs.count)
    }

    @Test("every corpus folder belongs to a target")
    func noOrphanFolders() throws {
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path)
        #expect(Set(folders).isSubset(of: Set(FuzzTarget.all.map(\.name))))
    }
}
