import Testing

@testable import Wearables

/// Every InfiniTime decoder over every prefix of its valid vectors, each vector with one byte changed, and seeded
/// random bytes (`MalformedInputTests.Bytes`, deterministic): it returns a value that re-encodes to one decoding
/// to itself, or throws a `GATTCodecError` the test allows — never a crash, never another error.
@Suite("InfiniTime malformed input")
struct InfiniTimeMalformedInputTests {
    /// `MalformedInputTests.fuzz` with the round trip as well: a value that decoded must survive encode → decode.
    /// Returns how many inputs decoded.
    @discardableResult
    static func fuzz<Value: Equatable>(
        valid: [[UInt8]], maxLength: Int, allowed: (GATTCodecError) -> Bool,
        decode: ([UInt8]) throws(GATTCodecError) -> Value, encode: (Value) -> [UInt8],
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Int {
        MalformedInputTests.fuzz(valid: valid, maxLength: maxLength, mutations: 300, allowed: allowed,
                                 sourceLocation: sourceLocation) { input throws(GATTCodecError) in
            let value = try decode(input)
            #expect((try? decode(encode(value))) == value, "\(input)", sourceLocation: sourceLocation)
        }
    }

    static func isTruncated(_ error: GATTCodecError) -> Bool { if case .truncated = error { true } else { false } }

    @Test("fixed-size notifications (steps, motion, music event, call response): only truncation or an unlisted code")
    func notifications() {
        Self.fuzz(valid: [[0x39, 0x30, 0x00, 0x00]], maxLength: 8, allowed: Self.isTruncated,
                  decode: InfiniTimeStepCount.decode, encode: { $0.encode() })
        Self.fuzz(valid: [[0x00, 0x00, 0x00, 0x00, 0x00, 0x04]], maxLength: 10, allowed: Self.isTruncated,
                  decode: InfiniTimeMotionValues.decode, encode: { $0.encode() })
        Self.fuzz(valid: [[0xE0], [0x03]], maxLength: 3, allowed: {
            if case .unknownIdentifier(field: "music event", _) = $0 { return true }
            return Self.isTruncated($0)
        }, decode: InfiniTimeMusicEvent.decode, encode: { $0.encode() })
        Self.fuzz(valid: [[0x01]], maxLength: 3, allowed: {
            if case .unknownIdentifier(field: "call response", _) = $0 { return true }
            return Self.isTruncated($0)
        }, decode: InfiniTimeCallResponse.decode, encode: { $0.encode() })
    }

    @Test("music writes: status, flag and numbers refuse what the layout does not allow; any text decodes or is not UTF-8")
    func musicWrites() {
        Self.fuzz(valid: [[0x01]], maxLength: 3, allowed: {
            if case .reservedValue(field: "music status", _) = $0 { return true }
            return Self.isTruncated($0)
        }, decode: InfiniTimeMusicStatus.decode, encode: { $0.encode() })
        Self.fuzz(valid: [[0x00]], maxLength: 3, allowed: {
            if case .reservedValue(field: "music flag", _) = $0 { return true }
            return Self.isTruncated($0)
        }, decode: InfiniTimeMusicFlag.decode, encode: { $0.encode() })
        Self.fuzz(valid: [[0x00, 0x00, 0x00, 0xB4]], maxLength: 8, allowed: {
            if case .outOfRange(field: "music number", let value) = $0 { return value < 0 }
            return Self.isTruncated($0)
        }, decode: InfiniTimeMusicNumber.decode, encode: { $0.encode() })
        Self.fuzz(valid: [Array("Daft Punk".utf8), Array(String(repeating: "é", count: 30).utf8)], maxLength: 60,
                  allowed: { $0 == .invalidUTF8 }, decode: InfiniTimeMusicText.decode, encode: { $0.encode() })
    }

    @Test("new alert: a header without text is truncated; an unlisted category or text that is not UTF-8 is refused")
    func newAlert() {
        Self.fuzz(valid: [InfiniTimeNewAlertTests.itdSimpleAlert, InfiniTimeNewAlertTests.itdCall], maxLength: 120,
                  allowed: {
                      switch $0 {
                      case .truncated(let expected, let actual): expected == 4 && actual < 4
                      case .unknownIdentifier(field: "alert category", _), .invalidUTF8: true
                      default: false
                      }
                  }, decode: InfiniTimeNewAlert.decode, encode: { $0.encode() })
    }

    @Test("navigation: unknown icon names, progress over 100 and text that is not UTF-8 are refused")
    func navigation() {
        Self.fuzz(valid: [Array("roundabout-left".utf8), Array("uturn".utf8)], maxLength: 24, allowed: {
            switch $0 {
            case .unknownIdentifier(field: "navigation icon", _), .invalidUTF8: true
            default: false
            }
        }, decode: InfiniTimeNavigationIcon.decode, encode: { $0.encode() })
        Self.fuzz(valid: [Array("50 m".utf8)], maxLength: 40, allowed: { $0 == .invalidUTF8 },
                  decode: InfiniTimeNavigationText.decode, encode: { $0.encode() })
        Self.fuzz(valid: [[0x2A]], maxLength: 3, allowed: {
            if case .outOfRange(field: "navigation progress", let value) = $0 { return value > 100 }
            return Self.isTruncated($0)
        }, decode: InfiniTimeNavigationProgress.decode, encode: { $0.encode() })
    }

    @Test("weather: only typed refusals (truncation, types, versions, icons, day count, UTF-8)")
    func weather() {
        let valid = [InfiniTimeWeatherTests.currentVersion0, InfiniTimeWeatherTests.currentVersion1,
                     InfiniTimeWeatherTests.forecastThreeDays]
        Self.fuzz(valid: valid, maxLength: 60, allowed: {
            switch $0 {
            case .truncated, .invalidUTF8: true
            case .unknownIdentifier(field: "weather message type", _): true
            case .reservedValue(let field, _): ["current weather version", "forecast version", "weather icon"].contains(field)
            case .outOfRange(field: "forecast days", let value): value > 5
            default: false
            }
        }, decode: InfiniTimeWeatherMessage.decode, encode: { $0.encode() })
    }

    @Test("local time information: a zone outside −48…+56 or a reserved DST offset is refused")
    func localTime() {
        Self.fuzz(valid: [[0x04, 0x04], [0x80, 0xFF]], maxLength: 4, allowed: {
            switch $0 {
            case .truncated: true
            case .outOfRange(field: "time zone", _), .reservedValue(field: "dst offset", _): true
            default: false
            }
        }, decode: LocalTimeInformation.decode, encode: { $0.encode() })
    }
}
