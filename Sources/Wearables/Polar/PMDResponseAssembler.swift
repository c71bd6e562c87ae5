/// Joins the parts of a PMD control point response and tells them from the device's "measurement stopped"
/// notice: what the driver's control point indications go through. Pure: values in, results out.
///
/// A response with "more" set is held until the part that ends it (the SDK's `sendPmdCommand` joins them the
/// same way); a new response for another op code while one is held replaces it, since the device has moved on.
public struct PMDResponseAssembler: Sendable {
    public enum Output: Sendable, Equatable {
        /// A whole response, its parameters joined.
        case response(PMDControlPointResponse)
        /// The device stopped these measurements on its own (unknown type bytes are left out).
        case stopped([PMDMeasurementType])
        /// A part of a response; more follow.
        case incomplete
    }

    private var held: PMDControlPointResponse?

    public init() {}

    public mutating func receive(_ bytes: [UInt8]) throws(GATTCodecError) -> Output {
        switch try PMDControlPointNotice.decode(bytes) {
        case .measurementsStopped(let types):
            return .stopped(types.compactMap { PMDMeasurementType(typeByte: $0) })
        case .response(let part):
            var response = part
            if let previous = held, previous.opCode == part.opCode, previous.measurementTypeByte == part.measurementTypeByte {
                response = previous
                response.append(part)
            }
            if response.more {
                held = response
                return .incomplete
            }
            held = nil
            return .response(response)
        }
    }
}
