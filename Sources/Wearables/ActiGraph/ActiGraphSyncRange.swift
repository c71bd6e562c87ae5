/// `sync` as the ActiGraph SDK writes it: `startDateTime` / `stopDateTime` as `"MM-dd-yyyy HH:mm:ss"` (UTC), flat
/// or in its `epoch` object, turned into the contract's `since_ts` / `until_ts` before the gateway parses the
/// request. A date that is not one, or a start after the stop, is `INVALID_VALUE` with the SDK's Date Format Error
/// (8); a wrong type is the contract's plain error.
public enum ActiGraphSyncRange {
    /// The SDK's "Date Format Error".
    public static let dateFormatError = 8

    /// `arguments` with the SDK's dates replaced by Unix milliseconds; other requests pass unchanged.
    public static func contractArguments(_ arguments: [String: DeviceValue]) throws(CommandError) -> [String: DeviceValue] {
        let reader = RequestReader(arguments)
        var dates = reader
        var translated = arguments
        if let epoch = try reader.nested("epoch") {
            try epoch.rejectUnknownFields(allowed: ["startDateTime", "stopDateTime"], request: "sync")
            guard arguments["startDateTime"] == nil, arguments["stopDateTime"] == nil else {
                throw CommandError(.invalidValue, "sync takes startDateTime and stopDateTime either in epoch or beside it, not both")
            }
            dates = epoch
            translated["epoch"] = nil
        }
        let start = try milliseconds(dates, "startDateTime")
        let stop = try milliseconds(dates, "stopDateTime")
        if let start {
            guard arguments["since_ts"] == nil else { throw CommandError(.invalidValue, "sync takes since_ts or startDateTime, not both") }
            translated["startDateTime"] = nil
            translated["since_ts"] = .integer(start)
        }
        if let stop {
            guard arguments["until_ts"] == nil else { throw CommandError(.invalidValue, "sync takes until_ts or stopDateTime, not both") }
            translated["stopDateTime"] = nil
            translated["until_ts"] = .integer(stop)
        }
        if let since = translated["since_ts"]?.integer, let until = translated["until_ts"]?.integer, since > until,
           start != nil || stop != nil {
            throw CommandError(.invalidValue, "the range starts after it stops (\(since) > \(until) in Unix ms)", vendorCode: dateFormatError)
        }
        return translated
    }

    private static func milliseconds(_ reader: RequestReader, _ key: String) throws(CommandError) -> Int64? {
        guard let text = try reader.string(key) else { return nil }
        guard let seconds = ActiGraphSDKDate.unixSeconds(from: text), seconds >= 0 else {
            var error = reader.invalid(key, "must be a UTC date and time \"MM-dd-yyyy HH:mm:ss\"", got: .text(text))
            error.vendorCode = dateFormatError
            throw error
        }
        return seconds * 1000
    }
}
