import Foundation
import Testing
import Wearables

@testable import Gateway

/// Publishes `payload` to `wear2mqtt/bridge/request/<name>` and parses what arrives.
private func bridgeRequest(_ name: String, _ payload: String) throws -> BridgeRequest {
    let request = try #require(contractRequest("wear2mqtt/bridge/request/\(name)", payload))
    guard case .bridge(let parsedName) = request.target else { throw CommandError(.internalError, "not a bridge request") }
    return try BridgeRequest(name: parsedName, arguments: request.arguments.get())
}

private func bridgeError(_ name: String, _ payload: String) -> CommandError? {
    do {
        _ = try bridgeRequest(name, payload)
        return nil
    } catch let error as CommandError {
        return error
    } catch {
        return CommandError(.internalError, "\(error)")
    }
}

@Suite("Bridge requests")
struct BridgeRequestTests {
    // MARK: scan

    @Test("scan with {} scans for 10 seconds without a filter; scan/stop stops")
    func scanDefaults() throws {
        #expect(try bridgeRequest("scan", "{}") == .scan(ScanRequest(durationSeconds: 10, filter: ScanFilter())))
        #expect(try bridgeRequest("scan/stop", "") == .stopScan)
    }

    @Test("scan takes a duration and a filter of UUIDs (normalized to 128 bits), RSSI and name")
    func scanFilter() throws {
        let request = try bridgeRequest(
            "scan", #"{"duration_s":30,"filter":{"uuids":["180D","0000180f-0000-1000-8000-00805F9B34FB","0000fe95"],"rssi":-80,"name":"Polar"}}"#)
        #expect(request == .scan(ScanRequest(durationSeconds: 30, filter: ScanFilter(
            uuids: [
                "0000180d-0000-1000-8000-00805f9b34fb", "0000180f-0000-1000-8000-00805f9b34fb",
                "0000fe95-0000-1000-8000-00805f9b34fb",
            ],
            rssi: -80, name: "Polar"))))
    }

    @Test("scan refuses out-of-range durations, bad filters and unknown fields", arguments: [
        (#"{"duration_s":0}"#, "duration_s must be an integer from 1 to 300 seconds, got 0"),
        (#"{"duration_s":301}"#, "duration_s must be an integer from 1 to 300 seconds, got 301"),
        (#"{"duration_s":"10"}"#, #"duration_s must be an integer from 1 to 300 seconds, got "10""#),
        (#"{"filter":"polar"}"#, #"filter must be a JSON object, got "polar""#),
        (#"{"filter":{"uuids":"180d"}}"#, #"filter.uuids must be an array, got "180d""#),
        (#"{"filter":{"uuids":["heart"]}}"#,
         #"filter.uuids must list UUIDs such as "180d" or "0000180d-0000-1000-8000-00805f9b34fb", got "heart""#),
        (#"{"filter":{"uuids":[180]}}"#,
         #"filter.uuids must list UUIDs such as "180d" or "0000180d-0000-1000-8000-00805f9b34fb", got 180"#),
        (#"{"filter":{"rssi":-200}}"#, "filter.rssi must be an integer from -127 to 20 dBm, got -200"),
        (#"{"filter":{"name":""}}"#, #"filter.name must be a non-empty string, got """#),
        (#"{"filter":{"rsi":-50}}"#, #"unknown field "filter.rsi" for scan, which accepts filter.uuids, filter.rssi and filter.name"#),
        (#"{"seconds":5}"#, #"unknown field "seconds" for scan, which accepts duration_s and filter"#),
    ])
    func scanErrors(payload: String, message: String) {
        #expect(bridgeError("scan", payload) == CommandError(.invalidValue, message))
    }

    // MARK: devices

    @Test("device/add takes an address (normalized), and optionally a driver and a name")
    func addDevice() throws {
        #expect(try bridgeRequest("device/add", #"{"address":"a4:c1:38:f0:0b:1e"}"#)
            == .addDevice(address: "A4:C1:38:F0:0B:1E", driver: nil, name: nil))
        #expect(try bridgeRequest("device/add", #"{"address":"A4:C1:38:F0:0B:1E","driver":"heart_rate","name":"chest"}"#)
            == .addDevice(address: "A4:C1:38:F0:0B:1E", driver: "heart_rate", name: "chest"))
        #expect(try bridgeRequest("device/add", #"{"serial":"TAS1D12345678"}"#)
            == .addDeviceBySerial(serial: "TAS1D12345678", driver: nil, name: nil))
        #expect(bridgeError("device/add", #"{"serial":"TAS1D12345678","address":"A4:C1:38:F0:0B:1E"}"#)
            == CommandError(.invalidValue, "device/add takes an address or a serial, not both"))
        #expect(bridgeError("device/add", #"{"serial":7}"#) == CommandError(.invalidValue, "serial must be a non-empty string, got 7"))
    }

    @Test("device/add refuses bad addresses, drivers and names", arguments: [
        ("{}", "address is required: the device's Bluetooth address (or its serial, for a device that advertises one)"),
        (#"{"address":"A4C138F00B1E"}"#, #"address must be a Bluetooth address like AA:BB:CC:DD:EE:FF, got "A4C138F00B1E""#),
        (#"{"address":42}"#, "address must be a string, got 42"),
        (#"{"address":"A4:C1:38:F0:0B:1E","driver":"heart rate"}"#, #"driver may only contain A-Z, a-z, 0-9, _ and -, got "heart rate""#),
        (#"{"address":"A4:C1:38:F0:0B:1E","name":"bridge"}"#, #"name "bridge" is reserved for the gateway's own topics (bridge, get, request, response, set, in any case)"#),
        (#"{"address":"A4:C1:38:F0:0B:1E","name":"BRIDGE"}"#, #"name "BRIDGE" is reserved for the gateway's own topics (bridge, get, request, response, set, in any case)"#),
        (#"{"serial":"TAS1D12345678","name":"request"}"#, #"name "request" is reserved for the gateway's own topics (bridge, get, request, response, set, in any case)"#),
        (#"{"address":"A4:C1:38:F0:0B:1E","name":"\#(String(repeating: "n", count: 65))"}"#, "name must be at most 64 characters, got 65"),
        (#"{"address":"A4:C1:38:F0:0B:1E","name":"../.."}"#, #"name may only contain A-Z, a-z, 0-9, _ and -, got "../..""#),
        (#"{"address":"A4:C1:38:F0:0B:1E","name":"my/band"}"#, #"name may only contain A-Z, a-z, 0-9, _ and -, got "my/band""#),
        (#"{"address":"A4:C1:38:F0:0B:1E","adress":"x"}"#,
         #"unknown field "adress" for device/add, which accepts address, serial, driver and name"#),
    ])
    func addDeviceErrors(payload: String, message: String) {
        #expect(bridgeError("device/add", payload) == CommandError(.invalidValue, message))
    }

    @Test("device/remove, rename and pair take an id; rename's name follows the id rules")
    func idRequests() throws {
        #expect(try bridgeRequest("device/remove", #"{"id":"strap"}"#) == .removeDevice(id: "strap"))
        #expect(try bridgeRequest("device/rename", #"{"id":"strap","name":"chest_strap"}"#)
            == .renameDevice(id: "strap", name: "chest_strap"))
        #expect(try bridgeRequest("device/pair", #"{"id":"band","transaction":"p"}"#) == .pairDevice(id: "band"))
        #expect(bridgeError("device/remove", "{}") == CommandError(.invalidValue, "id is required: the device's id as in its topics"))
        #expect(bridgeError("device/remove", #"{"id":7}"#) == CommandError(.invalidValue, "id must be a non-empty string, got 7"))
        #expect(bridgeError("device/rename", #"{"id":"strap"}"#) == CommandError(.invalidValue, "name is required: the device's new id"))
        #expect(bridgeError("device/rename", #"{"id":"strap","name":"chest strap"}"#)
            == CommandError(.invalidValue, #"name may only contain A-Z, a-z, 0-9, _ and -, got "chest strap""#))
        #expect(bridgeError("device/rename", #"{"id":"strap","name":"Bridge"}"#)
            == CommandError(.invalidValue, #"name "Bridge" is reserved for the gateway's own topics (bridge, get, request, response, set, in any case)"#))
        #expect(bridgeError("device/rename", #"{"id":"strap","name":"\#(String(repeating: "x", count: 10_000))"}"#)
            == CommandError(.invalidValue, "name must be at most 64 characters, got 10000"))
        #expect(bridgeError("device/rename", #"{"id":"strap","name":"\u202Egat"}"#)?.message.hasPrefix("name may only contain") == true)
        #expect(bridgeError("device/rename", #"{"id":"strap","name":" strap"}"#)?.message.hasPrefix("name may only contain") == true)
    }

    @Test("device/pair/confirm takes the code as a string of digits, keeping leading zeros")
    func confirmPairing() throws {
        #expect(try bridgeRequest("device/pair/confirm", #"{"id":"band","code":"1234"}"#) == .confirmPairing(id: "band", code: "1234"))
        #expect(try bridgeRequest("device/pair/confirm", #"{"id":"band","code":"012345"}"#) == .confirmPairing(id: "band", code: "012345"))
    }

    @Test("device/pair/confirm refuses codes that are not digit strings", arguments: [
        (#"{"id":"band","code":1234}"#, "code must be a string, got 1234"),
        (#"{"id":"band","code":"12a4"}"#, #"code must be a string of 1 to 16 digits such as "123456", got "12a4""#),
        (#"{"id":"band","code":""}"#, #"code must be a string of 1 to 16 digits such as "123456", got """#),
        (#"{"id":"band","code":"12345678901234567"}"#,
         #"code must be a string of 1 to 16 digits such as "123456", got "12345678901234567""#),
        (#"{"id":"band"}"#, "code is required: the digits the device shows, as a string"),
    ])
    func confirmPairingErrors(payload: String, message: String) {
        #expect(bridgeError("device/pair/confirm", payload) == CommandError(.invalidValue, message))
    }

    @Test("device/options changes batch_ms, qos, retain, notify, link and sync_every_s, leaving the others")
    func options() throws {
        #expect(try bridgeRequest("device/options", #"{"id":"band","options":{"batch_ms":250,"qos":1,"retain":true,"notify":"start_notify"}}"#)
            == .setDeviceOptions(id: "band", DeviceOptionsChange(batchMilliseconds: 250, sampleQoS: 1, retainSamples: true, notify: "start_notify")))
        #expect(try bridgeRequest("device/options", #"{"id":"band","options":{"batch_ms":0}}"#)
            == .setDeviceOptions(id: "band", DeviceOptionsChange(batchMilliseconds: 0)))
        let link = try bridgeRequest("device/options", #"{"id":"band","options":{"link":"on_demand","sync_every_s":900}}"#)
        #expect(link == .setDeviceOptions(id: "band", DeviceOptionsChange(link: .onDemand, syncEverySeconds: 900)))
        // What a devices.json written before these options existed holds keeps its device, with their defaults.
        let old = try JSONDecoder().decode(DeviceOptions.self, from: Data(#"{"batch_ms":5,"qos":1,"retain":false,"notify":"acquire"}"#.utf8))
        #expect(old.batchMilliseconds == 5 && old.link == .auto && old.syncEverySeconds == 3600)
        let empty = try bridgeRequest("device/options", #"{"id":"band","options":{}}"#)
        #expect(empty == .setDeviceOptions(id: "band", DeviceOptionsChange()))
    }

    @Test("device/options refuses out-of-range and unknown options", arguments: [
        (#"{"id":"band","options":{"batch_ms":10001}}"#, "options.batch_ms must be an integer from 0 to 10000 milliseconds, got 10001"),
        (#"{"id":"band","options":{"batch_ms":-1}}"#, "options.batch_ms must be an integer from 0 to 10000 milliseconds, got -1"),
        (#"{"id":"band","options":{"qos":3}}"#, "options.qos must be an integer from 0 to 2, got 3"),
        (#"{"id":"band","options":{"retain":"yes"}}"#, #"options.retain must be true or false, got "yes""#),
        (#"{"id":"band","options":{"notify":"poll"}}"#, #"options.notify must be one of "acquire" or "start_notify", got "poll""#),
        (#"{"id":"band","options":{"batch":100}}"#,
         #"unknown field "options.batch" for device/options, which accepts options.batch_ms, options.qos, options.retain, "#
         + #"options.notify, options.link and options.sync_every_s"#),
        (#"{"id":"band","options":{"link":"sometimes"}}"#,
         #"options.link must be one of "always", "on_demand" or "auto", got "sometimes""#),
        (#"{"id":"band","options":{"link":true}}"#, #"options.link must be one of "always", "on_demand" or "auto", got true"#),
        (#"{"id":"band","options":{"sync_every_s":59}}"#, "options.sync_every_s must be an integer from 60 to 86400 seconds, got 59"),
        (#"{"id":"band","options":{"sync_every_s":"hourly"}}"#,
         #"options.sync_every_s must be an integer from 60 to 86400 seconds, got "hourly""#),
        (#"{"id":"band","options":[1]}"#, "options must be a JSON object, got [1]"),
        (#"{"id":"band"}"#, "options is required: an object of options to change"),
    ])
    func optionsErrors(payload: String, message: String) {
        #expect(bridgeError("device/options", payload) == CommandError(.invalidValue, message))
    }

    @Test("options: each field checked with its path and the accepted values", arguments: [
        (#"{"options":{"log_level":"loud"}}"#,
         #"options.log_level must be one of "trace", "debug", "info", "notice", "warning", "error" or "critical", got "loud""#),
        (#"{"options":{"health_interval_s":4}}"#, "options.health_interval_s must be an integer from 5 to 86400 seconds, got 4"),
        (#"{"options":{"devices":{"strap":{"batch_ms":20000}}}}"#,
         "options.devices.strap.batch_ms must be an integer from 0 to 10000 milliseconds, got 20000"),
        (#"{"options":{"devices":{"strap":3}}}"#, "options.devices must map device ids to objects of device options, got 3"),
        (#"{}"#, "options is required: an object of options to change"),
    ])
    func bridgeOptionsErrors(payload: String, message: String) {
        #expect(bridgeError("options", payload) == CommandError(.invalidValue, message))
    }

    @Test("options parses into typed changes")
    func bridgeOptions() throws {
        let request = try bridgeRequest("options", #"{"options":{"log_level":"debug","health_interval_s":30,"devices":{"a":{"qos":1}}}}"#)
        #expect(request == .options(BridgeOptionsChange(logLevel: .debug, healthIntervalSeconds: 30,
                                                          devices: ["a": DeviceOptionsChange(sampleQoS: 1)])))
    }

    // MARK: unknown

    @Test("an unknown bridge request is UNKNOWN_COMMAND listing the requests")
    func unknown() {
        #expect(bridgeError("device/explode", "{}") == CommandError(
            .unknownCommand,
            #"unknown bridge request "device/explode"; bridge requests are scan, scan/stop, device/add, device/remove, device/rename, device/pair, device/pair/confirm, device/options, firmware/list, options and health_check"#))
        #expect(bridgeError("", "{}")?.code == .unknownCommand)
    }

    @Test("every request name round-trips through the parsed value's name", arguments: BridgeRequest.names)
    func names(name: String) throws {
        let payloads = [
            "device/add": #"{"address":"AA:BB:CC:DD:EE:FF"}"#, "device/rename": #"{"id":"a","name":"b"}"#,
            "device/pair/confirm": #"{"id":"a","code":"1"}"#, "device/options": #"{"id":"a","options":{}}"#,
            "device/remove": #"{"id":"a"}"#, "device/pair": #"{"id":"a"}"#, "options": #"{"options":{}}"#,
        ]
        #expect(try bridgeRequest(name, payloads[name] ?? "{}").name == name)
    }
}
