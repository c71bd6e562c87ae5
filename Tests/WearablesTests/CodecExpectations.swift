import Testing

@testable import Wearables

/// Every codec with a fixed layout, for the tests that must hold for all of them.
let allCharacteristicValueTypes: [any GATTCharacteristicValue.Type] = [
    HeartRateMeasurement.self, BodySensorLocation.self, HeartRateControlPointCommand.self, BatteryLevel.self,
    SystemID.self, PnPID.self, AlertLevel.self, CurrentTime.self, PLXSpotCheckMeasurement.self,
    PLXContinuousMeasurement.self, TemperatureMeasurement.self, RunningSpeedCadenceMeasurement.self,
    CyclingSpeedCadenceMeasurement.self,
]

/// `full` decodes, and every shorter prefix of it fails with `truncated` naming the prefix's length — the
/// codec never reads past the end and never accepts a value cut short.
func expectEveryPrefixTruncated<Value: GATTCharacteristicValue>(
    _: Value.Type, _ full: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(throws: Never.self, sourceLocation: sourceLocation) { try Value.decode(full) }
    for length in 0..<full.count {
        do {
            let value = try Value.decode(Array(full.prefix(length)))
            Issue.record("a \(length)-byte prefix decoded to \(value)", sourceLocation: sourceLocation)
        } catch {
            guard case .truncated(let expected, let actual) = error, actual == length, expected > length else {
                Issue.record("a \(length)-byte prefix threw \(error)", sourceLocation: sourceLocation)
                continue
            }
        }
    }
}

/// `value` encodes to `bytes` exactly, and `bytes` decode to `value`.
func expectCodes<Value: GATTCharacteristicValue>(
    _ value: Value, as bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
) throws {
    #expect(value.encode() == bytes, sourceLocation: sourceLocation)
    #expect(try Value.decode(bytes) == value, sourceLocation: sourceLocation)
}

extension CommandError {
    /// Whether the message names `field` as the contract's errors do: first, followed by a driver's rule
    /// (`field: …`) or the shared reader's sentence (`field must be …`), or quoted in an unknown-field message.
    func names(_ field: String) -> Bool {
        message.hasPrefix(field + ":") || message.hasPrefix(field + " ") || message.contains("\"\(field)\"")
    }
}
