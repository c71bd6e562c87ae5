import Wearables

/// What one model of Polar sensor offers over PMD and how it frames each stream, from the public documents:
/// the SDK's product pages (`documentation/products/PolarH10.md`, `PolarVeritySense.md` and the README of
/// `polarofficial/polar-ble-sdk`) for the streams, rates and ranges; the SDK's decoders for the frame types.
/// Which frame type each model sends is *modeled*: the H10 raw (24-bit ECG, 16-bit acceleration, as in the
/// SDK's H10 test vectors), the Verity Sense delta-compressed (the frame types the SDK decodes for it).
struct PolarSimulatedModel: Sendable {
    enum Framing: Sendable, Equatable {
        case rawECG
        case rawAcceleration
        case compressedAcceleration
        case compressedPPG
        case rawPPI
        /// Compressed type 0: 16-bit counts × the factor the start response gives.
        case compressedGyroscope(factor: Float)
        case compressedMagnetometer(factor: Float)
    }

    struct Stream: Sendable {
        var settings: PMDSettings
        var framing: Framing
    }

    let model: String
    let streams: [PMDMeasurementType: Stream]
    /// Whether Heart Rate Measurement carries RR intervals (the H10's does; the Verity Sense's optical rate not).
    let heartRateHasRR: Bool
    /// Whether it records heart rate or RR intervals in its own memory, over PSFTP (the H10 alone, per the SDK's
    /// `polar_device_capabilities.json`: `recordingSupported` and the H10 file system).
    var recordsOnDevice = false

    var features: PMDFeatures { PMDFeatures(offering: Set(streams.keys)) }

    static let h10 = PolarSimulatedModel(model: "H10", streams: [
        .ecg: Stream(settings: PMDSettings(values: [.sampleRate: [130], .resolution: [14]]), framing: .rawECG),
        .acc: Stream(settings: PMDSettings(values: [.sampleRate: [25, 50, 100, 200], .resolution: [16], .range: [2, 4, 8]]),
                     framing: .rawAcceleration),
    ], heartRateHasRR: true, recordsOnDevice: true)

    static let veritySense = PolarSimulatedModel(model: "Sense", streams: [
        .ppg: Stream(settings: PMDSettings(values: [.sampleRate: [55], .resolution: [22], .channels: [4]]), framing: .compressedPPG),
        .acc: Stream(settings: PMDSettings(values: [.sampleRate: [52], .resolution: [16], .range: [8], .channels: [3]]),
                     framing: .compressedAcceleration),
        .ppi: Stream(settings: PMDSettings(), framing: .rawPPI),
        .gyroscope: Stream(settings: PMDSettings(values: [.sampleRate: [52], .resolution: [16], .range: [250, 500, 1000, 2000],
                                                          .channels: [3]]),
                           framing: .compressedGyroscope(factor: 2000.0 / 32768)),
        .magnetometer: Stream(settings: PMDSettings(values: [.sampleRate: [10, 20, 50, 100], .resolution: [16], .range: [50],
                                                             .channels: [3]]),
                              framing: .compressedMagnetometer(factor: 0.001)),
    ], heartRateHasRR: false)
}
