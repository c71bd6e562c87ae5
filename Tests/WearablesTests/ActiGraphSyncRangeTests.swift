import Testing
import Wearables

/// `sync` as the ActiGraph SDK writes it, translated to the contract's range before the gateway parses it.
@Suite("ActiGraph sync range: the SDK's dates in the contract's form")
struct ActiGraphSyncRangeTests {
    func translated(_ arguments: [String: DeviceValue]) throws -> [String: DeviceValue] {
        try ActiGraphDriver.contractArguments(for: "sync", arguments)
    }

    func error(_ arguments: [String: DeviceValue]) -> CommandError? {
        do {
            _ = try translated(arguments)
            return nil
        } catch let error as CommandError {
            return error
        } catch {
            return nil
        }
    }

    @Test("startDateTime and stopDateTime, flat or in the SDK's epoch object, become since_ts and until_ts")
    func sdkDates() throws {
        // 07-21-2015 04:05:00 UTC is 1437451500 s.
        #expect(try translated(["startDateTime": "07-21-2015 04:05:00", "stopDateTime": "07-21-2015 06:05:00"])
            == ["since_ts": 1_437_451_500_000, "until_ts": 1_437_458_700_000])
        #expect(try translated(["epoch": ["startDateTime": "07-21-2015 04:05:00"]]) == ["since_ts": 1_437_451_500_000])
        #expect(try translated(["startDateTime": "07-21-2015 04:05:00", "until_ts": 1_437_458_700_000])
            == ["since_ts": 1_437_451_500_000, "until_ts": 1_437_458_700_000])
        #expect(try translated(["since_ts": 5]) == ["since_ts": 5], "the contract's own form passes")
        #expect(try ActiGraphDriver.contractArguments(for: "find", ["startDateTime": 1]) == ["startDateTime": 1],
                "other commands pass unchanged")
    }

    @Test("a bad SDK date, or a start after the stop, is INVALID_VALUE with the SDK's Date Format Error 8")
    func badDates() {
        #expect(error(["startDateTime": "2015-07-21 04:05:00"]) == CommandError(
            .invalidValue, #"startDateTime must be a UTC date and time "MM-dd-yyyy HH:mm:ss", got "2015-07-21 04:05:00""#, vendorCode: 8))
        #expect(error(["epoch": ["stopDateTime": "13-40-2015 04:05:00"]])?.vendorCode == 8)
        #expect(error(["startDateTime": "07-21-2015 06:05:00", "stopDateTime": "07-21-2015 04:05:00"])
            == CommandError(.invalidValue, "the range starts after it stops (1437458700000 > 1437451500000 in Unix ms)", vendorCode: 8))
        #expect(error(["startDateTime": 20_150_721])?.vendorCode == nil, "a wrong type is the contract's error")
    }

    @Test("both forms of one end, both places for the dates, or an unknown epoch field are refused")
    func conflicts() {
        #expect(error(["since_ts": 1, "startDateTime": "07-21-2015 04:05:00"])?.message == "sync takes since_ts or startDateTime, not both")
        #expect(error(["epoch": ["startDateTime": "07-21-2015 04:05:00", "start": 1]])?.message
                == #"unknown field "epoch.start" for sync, which accepts epoch.startDateTime and epoch.stopDateTime"#)
        #expect(error(["epoch": ["startDateTime": "07-21-2015 04:05:00"], "stopDateTime": "07-21-2015 06:05:00"])?.message
                == "sync takes startDateTime and stopDateTime either in epoch or beside it, not both")
    }
}
