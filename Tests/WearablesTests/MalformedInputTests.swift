import Testing
import Wearables

@Suite("Malformed input")
struct MalformedInputTests {
    @Test("every codec refuses an empty value as truncated")
    func empty() {
        for type in allCharacteristicValueTypes {
            do {
                let value = try type.decode([])
                Issue.record("\(type) decoded nothing to \(value)")
            } catch {
                guard case .truncated(let expected, actual: 0) = error, expected > 0 else {
                    Issue.record("\(type) threw \(error)")
                    continue
                }
            }
        }
    }

    /// Deterministic bytes (xorshift64), so a failure can be replayed. Half of them are below 16, so that
    /// layouts with narrow ranges (a month, an hour) decode often enough to exercise the round trip.
    struct Bytes {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        mutating func next() -> UInt8 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            let byte = UInt8(truncatingIfNeeded: state >> 8)
            return state & 1 == 0 ? byte : byte & 0x0F
        }
    }

    @Test("arbitrary bytes either throw a typed error or decode to a value that re-encodes to itself")
    func arbitraryBytes() throws {
        var bytes = Bytes()
        for type in allCharacteristicValueTypes {
            var decoded = 0
            for _ in 0..<3000 {
                let length = Int(bytes.next() % 24)
                let input = (0..<length).map { _ in bytes.next() }
                if try checkRoundTrip(type, input) { decoded += 1 }
            }
            #expect(decoded > 0, "no input decoded as \(type)")
        }
    }

    /// True when `input` decoded; records an issue when the decoded value does not survive encode → decode.
    private func checkRoundTrip<Value: GATTCharacteristicValue>(_: Value.Type, _ input: [UInt8]) throws -> Bool {
        guard let value = try? Value.decode(input) else { return false }
        #expect(try Value.decode(value.encode()) == value, "\(Value.self) from \(input)")
        return true
    }
}
