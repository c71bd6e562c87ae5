/// One libFuzzer target: a name (its corpus folder under `Tests/fuzz/corpus/`) and what one input does.
///
/// A target feeds the input to every decoder of one family and checks what must hold for any input: decoding
/// returns a value or throws the codec's typed error, and a value that decoded survives encode → decode
/// unchanged. A broken invariant is a `precondition` failure, which libFuzzer reports as a crash with the input
/// that caused it; the corpus replay tests run the same closures over the committed corpus in every test run.
public struct FuzzTarget: Sendable {
    public let name: String
    /// What the target covers, for `wear2mqtt-fuzz --list` and docs/reliability.md.
    public let summary: String
    public let run: @Sendable ([UInt8]) -> Void

    public init(name: String, summary: String, run: @escaping @Sendable ([UInt8]) -> Void) {
        self.name = name
        self.summary = summary
        self.run = run
    }
}

extension FuzzTarget {
    /// Every target, in the order `.ci/run` runs them.
    public static let all: [FuzzTarget] = [
        standardGATT, bose, empatica, goFIT, actiGraph, dfuProtocol, dfuInitPacket, dfuPackage, json, request,
        configuration, spool, polar, infiniTime, esphome, dbusSignal,
    ]

    public static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }
}

/// Decodes `bytes` and, when that works, checks the value comes back from its own encoding.
func checkRoundTrip<Value: Equatable>(_ bytes: [UInt8], _ decode: ([UInt8]) throws -> Value,
                                      _ encode: (Value) -> [UInt8], _ what: @autoclosure () -> String) {
    guard let value = try? decode(bytes) else { return }
    expectStable(value, encode, decode, what())
}

/// Traps when a decoded value does not come back from its own encoding: the fuzzer's oracle beyond "no crash".
func expectStable<Value: Equatable>(_ value: Value, _ encode: (Value) -> [UInt8],
                                    _ decode: ([UInt8]) throws -> Value, _ what: @autoclosure () -> String) {
    let bytes = encode(value)
    guard let again = try? decode(bytes) else {
        preconditionFailure("\(what()): \(value) encodes to \(bytes), which does not decode")
    }
    precondition(again == value, "\(what()): \(value) encodes to \(bytes), which decodes to \(again)")
}
