import Testing
@testable import Wearables

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

    // MARK: Vendor codecs that read as much as the vendors' own code does (issue 23)

    /// Random values, every prefix of each valid value, and each valid value with `mutations` copies of one byte
    /// changed: `decode` returns or throws, and every error it throws is one `allowed` accepts. Deterministic
    /// (`Bytes`). Shared by every vendor's malformed-input suite; returns how many inputs decoded.
    @discardableResult
    static func fuzz(
        valid: [[UInt8]], maxLength: Int, mutations: Int = 200, allowed: (GATTCodecError) -> Bool,
        sourceLocation: SourceLocation = #_sourceLocation, _ decode: ([UInt8]) throws(GATTCodecError) -> Void
    ) -> Int {
        var bytes = Bytes()
        var inputs: [[UInt8]] = (0..<3000).map { _ in (0..<Int(bytes.next()) % (maxLength + 1)).map { _ in bytes.next() } }
        for value in valid {
            inputs += (0...value.count).map { Array(value.prefix($0)) }
            for _ in 0..<mutations where !value.isEmpty {
                var changed = value
                changed[Int(bytes.next()) % value.count] = bytes.next()
                inputs.append(changed)
            }
        }
        var decoded = 0
        for input in inputs {
            do {
                try decode(input)
                decoded += 1
            } catch {
                if !allowed(error) { Issue.record("\(input) threw \(error)", sourceLocation: sourceLocation) }
            }
        }
        #expect(decoded > 0, "nothing decoded", sourceLocation: sourceLocation)
        return decoded
    }

    @Test("E4 accelerometer: any value decodes its whole triplets and encodes back, or is truncated below 18 bytes")
    func e4Accelerometer() {
        let valid: [[UInt8]] = [Array(0..<18), Array(0..<20), Array(100..<121), Array(200..<224)]
        Self.fuzz(valid: valid, maxLength: 40, allowed: { if case .truncated(_, let actual) = $0 { actual < 18 } else { false } }) { input throws(GATTCodecError) in
            let packet = try E4AccelerometerPacket.decode(input)
            #expect(packet.samples.count == input.count / 3 && packet.trailingBytes.count == input.count % 3)
            #expect(packet.encode() == input)
        }
    }

    @Test("Bose SensorInformation: whole entries or noted as ignored; only an empty raw range or short sample length throws")
    func boseSensorInformation() {
        let entries = [BoseCodecTests.accelerometerEntry, BoseCodecTests.gyroscopeEntry, BoseCodecTests.rotationEntry,
                       BoseCodecTests.unknownEntry]
        Self.fuzz(valid: [entries.reduce([], +), entries[1] + entries[3]], maxLength: 64,
             allowed: { if case .outOfRange = $0 { true } else { false } }) { input throws(GATTCodecError) in
            let information = try BoseSensorInformation.decode(input)
            let inverted = information.ignored.filter { if case .invertedRange = $0 { true } else { false } }
            #expect(information.entries.count + inverted.count == input.count / 12)
            #expect(information.ignored.contains(.partialEntry(byteCount: input.count % 12)) == (input.count % 12 != 0))
        }
    }

    @Test("Bose SensorData: the records before the first unframeable one, which is truncated or an unknown id")
    func boseSensorData() {
        let information = BoseCodecTests.allSensors
        let valid = [BoseCodecTests.allRecordBytes.reduce([], +), BoseCodecTests.gyroscopeRecord + BoseCodecTests.rotationRecord]
        Self.fuzz(valid: valid, maxLength: 80, allowed: { _ in false }) { input throws(GATTCodecError) in
            let decoded = BoseSensorData.decodeRecords(input, information: information)
            // Every sample length in `allSensors` is its layout's, so the records re-encode to the bytes they came from.
            let encoded = BoseSensorData.encode(decoded.records, information: information)
            #expect(Array(input.prefix(encoded.count)) == encoded)
            switch decoded.problem {
            case nil: #expect(encoded.count == input.count)
            case .truncated(let expected, let actual)?: #expect(actual == input.count && expected > actual)
            case .unknownIdentifier(let field, let value)?:
                #expect(field == "sensor id" && input[encoded.count] == UInt8(value) && information.entry(for: UInt8(value)) == nil)
            case let other?: Issue.record("\(input): \(other)")
            }
            // The strict decode is the same reading: the whole notification, or the same problem thrown.
            do throws(GATTCodecError) {
                let strict = try BoseSensorData.decode(input, information: information)
                #expect(decoded.problem == nil && decoded.records == strict)
            } catch {
                #expect(error == decoded.problem)
            }
        }
    }

    @Test("Bose GestureInformation and GestureConfiguration: any state byte reads; only truncation or an unlisted id throws")
    func boseGestures() {
        Self.fuzz(valid: [[0x80, 0x01, 0x81, 0x01, 0x82, 0x02, 0x90, 0x00]], maxLength: 16,
             allowed: { if case .truncated = $0 { true } else { false } }) { input throws(GATTCodecError) in
            #expect(try BoseGestureInformation.decode(input).encode() == input)
        }
        let information = BoseGestureInformation(entries: [
            .init(gestureID: 0x80, configurationLength: 1), .init(gestureID: 0x81, configurationLength: 1),
            .init(gestureID: 0x83, configurationLength: 2), .init(gestureID: 0x0A, configurationLength: 0),
        ])
        Self.fuzz(valid: [[0x80, 0x01, 0x81, 0xFE, 0x83, 0x03, 0x00, 0x0A]], maxLength: 16, allowed: {
            switch $0 {
            case .truncated: true
            case .unknownIdentifier(let field, _): field == "gesture id"
            default: false
            }
        }) { input throws(GATTCodecError) in
            let configuration = try BoseGestureConfiguration.decode(input, information: information)
            #expect(configuration.encode() == input)
        }
    }
}
