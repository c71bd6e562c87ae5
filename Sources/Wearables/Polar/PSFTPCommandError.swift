extension CommandError {
    /// The contract's error for a PSFTP error code the strap answered, with `vendor_code` = the `PbPFtpError` number.
    ///
    /// A path or identifier the strap does not have, and parameters it cannot take, are `INVALID_VALUE`; a command
    /// it does not know `NOT_SUPPORTED`; a state that forbids it now (recording already, busy, try again, battery too
    /// low, a prerequisite unmet) `BUSY`; a full disk and numbers the schema does not name `INTERNAL`.
    public init(psftpError error: PSFTPErrorCode, request: String) {
        let contract: Code = switch error.rawValue {
        case 102, 103, 104, 105, 107, 203: .invalidValue
        case 101, 201: .notSupported
        case 1, 2, 106, 202, 206, 208, 209: .busy
        default: .internalError
        }
        self.init(contract, "the device refused \(request): \(error)", vendorCode: Int(error.rawValue))
    }
}
