import FuzzTargets

#if canImport(Glibc)
import Glibc
#endif

/// libFuzzer's entry points over ``FuzzTarget``: one binary, the target chosen by `WEAR2MQTT_FUZZ_TARGET`.
///
/// Built by `Tests/fuzz/run` with `--sanitize fuzzer --sanitize address -Xswiftc -DFUZZING`, libFuzzer provides
/// `main`. Built plainly (every `swift build`), `main` below replays files instead, so a crash libFuzzer found can
/// be rerun in a debugger: `wear2mqtt-fuzz <target> <file>…`.
nonisolated(unsafe) private var selected: FuzzTarget?

private func complain(_ text: String) {
    let line = Array((text + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    let name = getenv("WEAR2MQTT_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let target = FuzzTarget.named(name) else {
        complain("set WEAR2MQTT_FUZZ_TARGET to one of: \(FuzzTarget.all.map(\.name).joined(separator: ", "))")
        exit(2)
    }
    selected = target
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    selected?.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

#if !FUZZING
@main
enum Replay {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget.named(name) else {
            print("usage: wear2mqtt-fuzz <target> <file>…   targets:")
            for target in FuzzTarget.all { print("  \(target.name): \(target.summary)") }
            exit(arguments.isEmpty ? 0 : 2)
        }
        for path in arguments.dropFirst() {
            // Named before it runs, unbuffered: a trap's message follows the name of the input that caused it.
            complain(path)
            guard let bytes = readFile(path) else {
                complain("cannot read \(path)")
                exit(1)
            }
            target.run(bytes)
        }
    }

    static func readFile(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { return ferror(file) == 0 ? bytes : nil }
            bytes += buffer[..<count]
        }
    }
}
#endif
