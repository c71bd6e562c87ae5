import Testing
import Wearables

@testable import Gateway

/// Publishes `payload` to `wear2mqtt/tag/request/<command>` and parses what arrives into a command.
private func command(_ command: String, _ payload: String) throws -> DeviceCommand {
    let request = try #require(contractRequest("wear2mqtt/tag/request/\(command)", payload))
    guard case .device(_, let name) = request.target else { throw CommandError(.internalError, "not a device request") }
    return try DeviceCommandParser.parse(command: name, arguments: request.arguments.get(), registry: WearableDrivers.all)
}

private func commandError(_ name: String, _ payload: String) -> CommandError? {
    do {
        _ = try command(name, payload)
        return nil
    } catch let error as CommandError {
        return error
    } catch {
        return CommandError(.internalError, "\(error)")
    }
}

@Suite("Device commands")
struct DeviceCommandParserTests {
    // MARK: find

    @Test("publishing {\"vibrations\":3} to …/request/find parses to find(vibrations: 3)")
    func findVibrations() throws {
        #expect(try command("find", #"{"vibrations":3}"#) == .find(vibrations: 3, level: nil))
        #expect(try command("find", #"{"vibrations":1}"#) == .find(vibrations: 1, level: nil))
        #expect(try command("find", #"{"vibrations":10.0}"#) == .find(vibrations: 10, level: nil))
    }

    @Test("publishing {\"level\":\"mild\"} to …/request/find parses to find(level: mild); {} means level high")
    func findLevel() throws {
        #expect(try command("find", #"{"level":"mild"}"#) == .find(vibrations: nil, level: .mild))
        #expect(try command("find", #"{"level":"none"}"#) == .find(vibrations: nil, level: AlertLevel.none))
        #expect(try command("find", "{}") == .find(vibrations: nil, level: .high))
        #expect(try command("find", "") == .find(vibrations: nil, level: .high))
    }

    @Test("find refuses wrong types, out-of-range values, both fields and unknown fields", arguments: [
        (#"{"vibrations":0}"#, "vibrations must be an integer from 1 to 10, got 0"),
        (#"{"vibrations":11}"#, "vibrations must be an integer from 1 to 10, got 11"),
        (#"{"vibrations":2.5}"#, "vibrations must be an integer from 1 to 10, got 2.5"),
        (#"{"vibrations":"3"}"#, #"vibrations must be an integer from 1 to 10, got "3""#),
        (#"{"vibrations":null}"#, "vibrations must be an integer from 1 to 10, got null"),
        (#"{"vibrations":true}"#, "vibrations must be an integer from 1 to 10, got true"),
        (#"{"level":"loud"}"#, #"level must be one of "none", "mild" or "high", got "loud""#),
        (#"{"level":2}"#, #"level must be one of "none", "mild" or "high", got 2"#),
        (#"{"vibrations":3,"level":"high"}"#, "find takes either vibrations or level, not both"),
        (#"{"vibration":3}"#, #"unknown field "vibration" for find, which accepts vibrations and level"#),
        (#"{"b":1,"a":2}"#, #"unknown fields "a" and "b" for find, which accepts vibrations and level"#),
    ])
    func findErrors(payload: String, message: String) {
        #expect(commandError("find", payload) == CommandError(.invalidValue, message))
    }

    @Test("a long wrong value is quoted cut short")
    func longValueQuoted() {
        let payload = #"{"level":"\#(String(repeating: "x", count: 100))"}"#
        #expect(commandError("find", payload)?.message
            == #"level must be one of "none", "mild" or "high", got "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx..."#)
    }

    // MARK: sync

    @Test("sync takes optional since_ts and until_ts in Unix milliseconds")
    func sync() throws {
        #expect(try command("sync", "{}") == .sync(since: nil, until: nil))
        #expect(try command("sync", #"{"since_ts":1700000000000}"#) == .sync(since: 1_700_000_000_000, until: nil))
        #expect(try command("sync", #"{"since_ts":1,"until_ts":1}"#) == .sync(since: 1, until: 1))
        #expect(try command("sync", #"{"until_ts":1800000000000}"#) == .sync(since: nil, until: 1_800_000_000_000))
    }

    @Test("sync refuses non-integers, negative times, since after until and unknown fields", arguments: [
        (#"{"since_ts":"yesterday"}"#, #"since_ts must be an integer Unix time in milliseconds, got "yesterday""#),
        (#"{"since_ts":-1}"#, "since_ts must be an integer Unix time in milliseconds, got -1"),
        (#"{"until_ts":1.5}"#, "until_ts must be an integer Unix time in milliseconds, got 1.5"),
        (#"{"since_ts":2,"until_ts":1}"#, "since_ts (2) must not be later than until_ts (1)"),
        (#"{"since":1}"#, #"unknown field "since" for sync, which accepts since_ts and until_ts"#),
        (#"{"startDateTime":"07-21-2015 04:05:00"}"#,
         #"unknown field "startDateTime" for sync, which accepts since_ts and until_ts"#),
    ])
    func syncErrors(payload: String, message: String) {
        #expect(commandError("sync", payload) == CommandError(.invalidValue, message))
    }

    // MARK: commands without fields

    @Test("refresh, time_sync, connect, disconnect, clear_data and factory_reset take {}")
    func noFieldCommands() throws {
        #expect(try command("refresh", "{}") == .refresh)
        #expect(try command("time_sync", "") == .timeSync)
        #expect(try command("connect", "{}") == .named("connect", [:]))
        #expect(try command("disconnect", "{}") == .named("disconnect", [:]))
        #expect(try command("clear_data", "{}") == .named("clear_data", [:]))
        #expect(try command("factory_reset", #"{"transaction":5}"#) == .named("factory_reset", [:]))
    }

    @Test("…/get with {} is refresh", arguments: ["", "{}"])
    func getIsRefresh(payload: String) throws {
        let request = try #require(contractRequest("wear2mqtt/band/get", payload))
        #expect(try DeviceCommandParser.parse(command: request.name, arguments: request.arguments.get(), registry: WearableDrivers.all) == .refresh)
    }

    @Test("commands without fields name the unknown ones", arguments: ["refresh", "time_sync", "connect", "factory_reset"])
    func noFieldCommandsRefuseFields(name: String) {
        #expect(commandError(name, #"{"force":true}"#)
            == CommandError(.invalidValue, #"\#(name) takes no fields, got unknown field "force""#))
    }

    // MARK: settings and configure

    @Test("…/set passes any object through as settings; drivers check the content")
    func settingsPassThrough() throws {
        let request = try #require(contractRequest("wear2mqtt/band/set", #"{"step_goal":8000,"time_format":"24","transaction":1}"#))
        #expect(try DeviceCommandParser.parse(command: request.name, arguments: request.arguments.get(), registry: WearableDrivers.all)
            == .settings(["step_goal": 8000, "time_format": "24"]))
    }

    @Test("configure passes sensors, gestures and vendor switches through")
    func configurePassThrough() throws {
        #expect(try command("configure", #"{"sensors":{"accelerometer":{"period_ms":20}},"gestures":{"double_tap":true},"raw_stream":true}"#)
            == .configure(["sensors": ["accelerometer": ["period_ms": 20]], "gestures": ["double_tap": true], "raw_stream": true]))
    }

    @Test("configure refuses sensors and gestures that are not objects", arguments: [
        (#"{"sensors":["accelerometer"]}"#, #"sensors must be a JSON object, got ["accelerometer"]"#),
        (#"{"sensors":{"accelerometer":20}}"#, "sensors.accelerometer must be a JSON object, got 20"),
        (#"{"gestures":true}"#, "gestures must be a JSON object, got true"),
    ])
    func configureErrors(payload: String, message: String) {
        #expect(commandError("configure", payload) == CommandError(.invalidValue, message))
    }

    // MARK: dfu

    @Test("dfu takes a relative file under dfu.dir and its SHA-256, normalized to lower case")
    func dfu() throws {
        let hash = String(repeating: "AB", count: 32)
        #expect(try command("dfu", #"{"file":"gofit/app_1.2.zip","sha256":"\#(hash)"}"#)
            == .named("dfu", ["file": "gofit/app_1.2.zip", "sha256": .text(hash.lowercased())]))
    }

    @Test("dfu refuses missing fields, escaping paths and malformed hashes", arguments: [
        (#"{"sha256":"00"}"#, "file is required: the firmware image's path relative to dfu.dir"),
        (#"{"file":"a.zip"}"#, "sha256 is required: the image's SHA-256 as 64 hex digits"),
        (#"{"file":"","sha256":"00"}"#, #"file must be a non-empty string, got """#),
        (#"{"file":"/etc/passwd","sha256":"00"}"#, #"file must be a path relative to dfu.dir without '..', got "/etc/passwd""#),
        (#"{"file":"a/../../b","sha256":"00"}"#, #"file must be a path relative to dfu.dir without '..', got "a/../../b""#),
        (#"{"file":"a.zip","sha256":"00"}"#, #"sha256 must be 64 hex digits, got "00""#),
        (#"{"file":"a.zip","sha256":7}"#, "sha256 must be a string, got 7"),
        (#"{"file":"a.zip","sha":"00"}"#, #"unknown field "sha" for dfu, which accepts file and sha256"#),
    ])
    func dfuErrors(payload: String, message: String) {
        #expect(commandError("dfu", payload) == CommandError(.invalidValue, message))
    }

    @Test("dfu/cancel takes no fields")
    func dfuCancel() throws {
        #expect(try command("dfu/cancel", "{}") == .named("dfu/cancel", [:]))
        #expect(commandError("dfu/cancel", #"{"now":true}"#)?.code == .invalidValue)
    }

    // MARK: unknown

    @Test("an unknown command is UNKNOWN_COMMAND listing the commands")
    func unknownCommand() {
        #expect(commandError("explode", "{}") == CommandError(
            .unknownCommand,
            #"unknown command "explode"; device commands are clear_data, configure, connect, dfu, dfu/cancel, disconnect, factory_reset, find, music, navigation, notify, recording, refresh, reset_energy_expended, settings, sync, time_sync and weather"#))
        #expect(commandError("Find", "{}")?.code == .unknownCommand)
        #expect(commandError("find/now", "{}")?.code == .unknownCommand)
    }

    @Test("every command the contract lists parses from a valid payload", arguments: DeviceCommandParser.commandNames(WearableDrivers.all))
    func everyCommandKnown(name: String) {
        let payload = name == "dfu" ? #"{"file":"a.zip","sha256":"\#(String(repeating: "0", count: 64))"}"# : "{}"
        #expect(commandError(name, payload) == nil)
    }
}

@Suite struct HeartRateControlPointCommandTests {
    @Test func resetEnergyExpendedIsACommandWithoutArguments() throws {
        #expect(try DeviceCommandParser.parse(command: "reset_energy_expended", arguments: [:], registry: WearableDrivers.all) == .named("reset_energy_expended", [:]))
        #expect(throws: CommandError.self) { try DeviceCommandParser.parse(command: "reset_energy_expended", arguments: ["x": 1], registry: WearableDrivers.all) }
    }
}
