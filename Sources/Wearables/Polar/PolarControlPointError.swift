extension CommandError {
    /// The contract's error for a PMD control point status other than success, with `vendor_code` = Polar's number.
    ///
    /// A refused setting is `INVALID_VALUE` (the driver checks settings against the device's own list first, so
    /// this means the device changed its mind); a type or operation the device lacks, and an MTU too small for
    /// the stream, `NOT_SUPPORTED`; a device that is busy with something else (in its charger, in another state)
    /// `BUSY`; a full disk or a number the SDK does not name `INTERNAL`.
    public init(pmdStatus code: UInt8, request: String) {
        let status = PMDResponseStatus(rawValue: code)
        let what = status?.summary ?? "error \(code)"
        let message = "the device refused \(request): \(what)"
        let contract: Code = switch status {
        case .invalidParameter, .invalidLength, .invalidResolution, .invalidSampleRate, .invalidRange,
             .invalidNumberOfChannels: .invalidValue
        case .invalidOpCode, .invalidMeasurementType, .notSupported, .invalidMTU: .notSupported
        case .alreadyInState, .invalidState, .deviceInCharger: .busy
        case .diskFull, .success, nil: .internalError
        }
        self.init(contract, message, vendorCode: Int(code))
    }
}
