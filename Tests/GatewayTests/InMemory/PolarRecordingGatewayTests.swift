import BlueZ
import EventLoop
import Gateway
import SimulatedWearables
import Synchronization
import Testing
import Wear2MQTTTesting
import Wearables

/// `request/recording` on a simulated H10 through the whole gateway in memory: the six actions over PSFTP, the
/// fetched recording as an answer and a durable record, every refusal of the request (before anything is sent),
/// the strap's own refusals with their PSFTP code as `vendor_code`, a model without recording, and a link lost in
/// the middle of a fetch. The strap's recording clock runs fast (`recording_speed`), so minutes record in a second.
@Suite("Gateway in memory: Polar H10 recording")
struct PolarRecordingGatewayTests {
    static let h10 = PolarGatewayTests.h10
    static let sense = PolarGatewayTests.sense

    static func code(_ response: [String: DeviceValue]?) -> String? { response?["error"]?["code"]?.text }
    static func vendorCode(_ response: [String: DeviceValue]?) -> Int64? { response?["error"]?["vendor_code"]?.integer }

    func started(h10Options: [String: SimulationOptionValue] = ["recording_speed": .double(600)],
                 time: TimeSource? = nil) async throws -> GatewayHarness {
        let gateway = try GatewayHarness(configuration: PolarGatewayTests.devices, time: time)
        try gateway.addDevice("polar_h10", address: Self.h10, options: h10Options)
        try gateway.addDevice("polar_verity_sense", address: Self.sense)
        await gateway.start()
        // The state's recording comes from the status the driver asks at every connection (a silent strap has none).
        let silent = h10Options["psftp_silent"] != nil
        #expect(await gateway.until(timeout: .seconds(60)) {
            (silent ? gateway.last("h10")?["capabilities"] : gateway.last("h10")?["recording"]) != nil
                && gateway.last("sense")?["capabilities"] != nil
        })
        return gateway
    }

    /// Requests written to the strap's file transfer so far: on every connection the driver asks the recording status
    /// once it can take recording requests.
    func fileTransferWrites(_ gateway: GatewayHarness) -> Int {
        gateway.central.writes(to: BluetoothAddress(Self.h10)!).filter { $0.characteristic == PolarUUID.Characteristic.fileTransferMTU }.count
    }

    /// Waits until the strap holds at least `count` samples of its running recording.
    func recorded(_ gateway: GatewayHarness, atLeast count: Int) async -> Bool {
        // eventually: the strap records on its own clock (the system's here, `recording_speed` times faster: on a
        // ManualClock each of its answers would wait for the test to move time as well), counted only when inspected;
        // nothing tells a sample recorded
        await eventually(timeout: .seconds(60)) {
            Int(await gateway.central.inspect(BluetoothAddress(Self.h10)!)["recorded_samples"] ?? "") ?? 0 >= count
        }
    }

    @Test("start, status, stop, list, fetch (several frames joined), remove; the state follows; the fetch is a durable record")
    func everyAction() async throws {
        try await withStopping(started()) { gateway in
            #expect(gateway.last("h10")?["capabilities"]?["recording"] == true)
            #expect(gateway.last("sense")?["capabilities"]?["recording"] == false)
            #expect(gateway.last("h10")?["recording"] == ["active": false])

            let start = await gateway.request("h10/request/recording", #"{"action":"start","identifier":"run1","sample_type":"hr","interval_s":1}"#)
            #expect(start?["data"] == ["recording": true, "identifier": "run1", "sample_type": "hr", "interval_s": 1], "\(String(describing: start))")
            #expect(gateway.last("h10")?["recording"] == ["active": true, "identifier": "run1"])
            let status = await gateway.request("h10/request/recording", #"{"action":"status"}"#)
            #expect(status?["data"] == ["recording": true, "identifier": "run1"])
            // 300 one-second values: more than one 244-byte frame of the in-memory link's MTU.
            #expect(await recorded(gateway, atLeast: 300))
            #expect(await gateway.request("h10/request/recording", #"{"action":"stop"}"#)?["data"] == ["recording": false])
            #expect(gateway.last("h10")?["recording"] == ["active": false])

            let list = await gateway.request("h10/request/recording", #"{"action":"list"}"#)
            let exercises = try #require(list?["data"]?["exercises"]?.list, "\(String(describing: list))")
            #expect(exercises.count == 1)
            #expect(exercises.first?["identifier"] == "run1" && exercises.first?["path"] == "/run1/SAMPLES.BPB")
            let size = try #require(exercises.first?["size"]?.integer)
            #expect(size > 244, "a file longer than one frame: \(size) bytes")

            let fetch = await gateway.request("h10/request/recording", #"{"action":"fetch","identifier":"run1"}"#)
            let data = try #require(fetch?["data"], "\(String(describing: fetch))")
            let rates = try #require(data["heart_rates"]?.list?.compactMap { $0.integer })
            #expect(rates.count >= 300 && data["samples"]?.integer == Int64(rates.count))
            #expect(rates.allSatisfy { (55...66).contains($0) }, "the strap's 60 bpm")
            #expect(data["sample_type"] == "hr" && data["interval_s"] == 1 && data["start_known"] == true)
            #expect(data["ts"]?.integer != nil && data["record_id"]?.text?.hasSuffix("-recording-run1-\(data["ts"]!.integer! / 1000)") == true)
            let record = try #require(gateway.last("h10/fitness/recording"))
            #expect(record["id"] == data["record_id"] && record["heart_rates"] == data["heart_rates"] && record["ts"] == data["ts"])
            #expect(gateway.sink.durableMessages.contains { $0.topic == "test/h10/fitness/recording" })
            // Fetched again: the same record, so a consumer drops the repeat by its id.
            let again = await gateway.request("h10/request/recording", #"{"action":"fetch","identifier":"run1"}"#)
            #expect(again?["data"]?["record_id"] == data["record_id"])
            let records = gateway.sink.durableMessages.filter { $0.topic == "test/h10/fitness/recording" }
            #expect(records.count == 2 && records[0].payload == records[1].payload)

            #expect(await gateway.request("h10/request/recording", #"{"action":"remove","identifier":"run1"}"#)?["data"] == ["removed": "run1"])
            #expect(await gateway.request("h10/request/recording", #"{"action":"list"}"#)?["data"] == ["exercises": []])

            // RR intervals, the interval left to its default.
            let rr = await gateway.request("h10/request/recording", #"{"action":"start","identifier":"beats","sample_type":"rr"}"#)
            #expect(rr?["data"]?["sample_type"] == "rr" && rr?["data"]?["interval_s"] == 1)
            #expect(await recorded(gateway, atLeast: 50))
            #expect(await gateway.request("h10/request/recording", #"{"action":"stop"}"#)?["status"] == "ok")
            let beats = await gateway.request("h10/request/recording", #"{"action":"fetch","identifier":"beats"}"#)
            let intervals = try #require(beats?["data"]?["rr_ms"]?.list?.compactMap { $0.integer }, "\(String(describing: beats))")
            #expect(intervals.count >= 50 && intervals.allSatisfy { (960...1040).contains($0) })
        }
    }

    @Test("refused before anything is sent: unknown device, bad JSON, wrong types, out-of-range values, unknown fields")
    func refusedRequests() async throws {
        try await withStopping(started()) { gateway in
            let address = BluetoothAddress(Self.h10)!
            let writes = gateway.central.writes(to: address).count
            let refused: [(String, String)] = [
                (#"{}"#, "action is required"),
                (#"{"action":"pause"}"#, #"action must be one of "start", "stop", "status", "list", "fetch" or "remove", got "pause""#),
                (#"{"action":7}"#, "action must be one of"),
                (#"{"action":"start"}"#, "identifier is required"),
                (#"{"action":"start","identifier":""}"#, "identifier must be 1 to 64 characters"),
                (#"{"action":"start","identifier":"\#(String(repeating: "x", count: 65))"}"#, "identifier must be 1 to 64 characters"),
                (#"{"action":"start","identifier":"a/b"}"#, "identifier must be 1 to 64 characters, without \"/\""),
                (#"{"action":"start","identifier":".."}"#, "identifier must be"),
                (#"{"action":"start","identifier":42}"#, "identifier must be a string"),
                (#"{"action":"start","identifier":"run","interval_s":2}"#, "interval_s must be 1 or 5 (seconds), got 2"),
                (#"{"action":"start","identifier":"run","interval_s":"1"}"#, "interval_s must be 1 or 5"),
                (#"{"action":"start","identifier":"run","sample_type":"ecg"}"#, #"sample_type must be one of "hr" or "rr", got "ecg""#),
                (#"{"action":"start","identifier":"run","rate":1}"#, #"unknown field "rate" for recording start"#),
                (#"{"action":"stop","identifier":"run"}"#, #"unknown field "identifier" for recording stop"#),
                (#"{"action":"fetch"}"#, "identifier is required"),
                (#"{"action":"remove","identifier":null}"#, "identifier must be a string"),
            ]
            for (body, message) in refused {
                let error = await gateway.request("h10/request/recording", body)?["error"]
                #expect(error?["code"] == "INVALID_VALUE", "\(body)")
                #expect(error?["message"]?.text?.hasPrefix(message) == true, "\(body): \(String(describing: error))")
            }
            #expect(Self.code(await gateway.request("h10/request/recording", #"{"action":"#)) == "INVALID_PAYLOAD")
            #expect(Self.code(await gateway.request("nobody/request/recording", #"{"action":"status"}"#)) == "DEVICE_NOT_FOUND")
            #expect(gateway.central.writes(to: address).count == writes)
            // A model without on-device recording (the SDK offers it for the H10 alone).
            let sense = await gateway.request("sense/request/recording", #"{"action":"status"}"#)
            #expect(Self.code(sense) == "NOT_SUPPORTED", "\(String(describing: sense))")
            // Checked even while the strap is away.
            await gateway.central.setInRange(address, false)
            await gateway.central.dropLink(address)
            #expect(await gateway.until { gateway.last("h10/availability")?["state"] == "offline" })
            #expect(Self.code(await gateway.request("h10/request/recording", #"{"action":"start","identifier":"a/b"}"#)) == "INVALID_VALUE")
            #expect(Self.code(await gateway.request("h10/request/recording", #"{"action":"status"}"#)) == "DEVICE_DISCONNECTED")
        }
    }

    @Test("the strap's refusals with their PSFTP number: recording already 202 and one stored 106 BUSY, no such recording 103")
    func deviceErrors() async throws {
        try await withStopping(started()) { gateway in
            let stopIdle = await gateway.request("h10/request/recording", #"{"action":"stop"}"#)
            #expect(Self.code(stopIdle) == "BUSY" && Self.vendorCode(stopIdle) == 106, "\(String(describing: stopIdle))")
            #expect(stopIdle?["error"]?["message"] == "the device refused recording stop: OPERATION_NOT_PERMITTED (106)")
            let missing = await gateway.request("h10/request/recording", #"{"action":"fetch","identifier":"ghost"}"#)
            #expect(Self.code(missing) == "INVALID_VALUE" && Self.vendorCode(missing) == 103, "\(String(describing: missing))")
            let removeMissing = await gateway.request("h10/request/recording", #"{"action":"remove","identifier":"ghost"}"#)
            #expect(Self.code(removeMissing) == "INVALID_VALUE" && Self.vendorCode(removeMissing) == 103)

            #expect(await gateway.request("h10/request/recording", #"{"action":"start","identifier":"a","interval_s":5}"#)?["status"] == "ok")
            let twice = await gateway.request("h10/request/recording", #"{"action":"start","identifier":"b"}"#)
            #expect(Self.code(twice) == "BUSY" && Self.vendorCode(twice) == 202, "\(String(describing: twice))")
            #expect(await gateway.request("h10/request/recording", #"{"action":"stop"}"#)?["status"] == "ok")
            let stored = await gateway.request("h10/request/recording", #"{"action":"start","identifier":"b"}"#)
            #expect(Self.code(stored) == "BUSY" && Self.vendorCode(stored) == 106, "\(String(describing: stored))")
            #expect(await gateway.request("h10/request/recording", #"{"action":"status"}"#)?["data"] == ["recording": false])
        }
    }

    @Test("a link lost in the middle of a fetch: DEVICE_DISCONNECTED; the recording is still on the strap afterwards")
    func linkLostMidFetch() async throws {
        try await withStopping(started(h10Options: ["recording_speed": .double(600), "psftp_drop_after_frames": .int(1)])) { gateway in
            #expect(await gateway.request("h10/request/recording", #"{"action":"start","identifier":"walk"}"#)?["status"] == "ok")
            #expect(await recorded(gateway, atLeast: 300))
            #expect(await gateway.request("h10/request/recording", #"{"action":"stop"}"#)?["status"] == "ok")
            let connections = gateway.central.connectionCount(BluetoothAddress(Self.h10)!)
            let fetch = await gateway.request("h10/request/recording", #"{"action":"fetch","identifier":"walk"}"#)
            #expect(Self.code(fetch) == "DEVICE_DISCONNECTED", "\(String(describing: fetch))")
            #expect(gateway.all("h10/fitness/recording").isEmpty)
            let asked = fileTransferWrites(gateway)
            // Back again, the strap still holds it (a one-frame answer is not cut), once the driver has asked its status.
            #expect(await gateway.until(timeout: .seconds(60)) {
                gateway.central.connectionCount(BluetoothAddress(Self.h10)!) > connections && gateway.last("h10/availability")?["state"] == "online"
                    && fileTransferWrites(gateway) > asked
            })
            let list = await gateway.request("h10/request/recording", #"{"action":"list"}"#)
            #expect(list?["data"]?["exercises"]?.list?.first?["identifier"] == "walk", "\(String(describing: list))")
        }
    }

    @Test("the start time outlives a restart of the gateway: fetched again afterwards, the record has the same id and ts")
    func startTimeOutlivesARestart() async throws {
        let gateway = try await started()
        #expect(await gateway.request("h10/request/recording", #"{"action":"start","identifier":"day","sample_type":"rr"}"#)?["status"] == "ok")
        #expect(await recorded(gateway, atLeast: 20))
        #expect(await gateway.request("h10/request/recording", #"{"action":"stop"}"#)?["status"] == "ok")
        let before = try #require(await gateway.request("h10/request/recording", #"{"action":"fetch","identifier":"day"}"#)?["data"])
        #expect(before["start_known"] == true)
        let asked = fileTransferWrites(gateway)
        try await withStopping(gateway.restarted()) { restarted in
            // The kept state already holds `recording` (issue 38): the strap is back once it is connected again and the
            // driver has asked its status.
            #expect(await restarted.until(timeout: .seconds(60)) {
                restarted.last("h10")?["connection"] == "connected" && fileTransferWrites(restarted) > asked
            })
            let after = await restarted.request("h10/request/recording", #"{"action":"fetch","identifier":"day"}"#)
            #expect(after?["data"]?["record_id"] == before["record_id"] && after?["data"]?["ts"] == before["ts"], "\(String(describing: after))")
            #expect(after?["data"]?["rr_ms"] == before["rr_ms"])
        }
    }

    @Test("a strap that never answers: TIMEOUT after the driver's 10 s of silence, and the strap is still usable by others")
    func silentStrap() async throws {
        // The driver's silences run on the gateway's clock, which the test moves.
        let clock = ManualClock()
        try await withStopping(started(h10Options: ["psftp_silent": .bool(true)], time: clock.timeSource)) { gateway in
            let asked = clock.now
            let answer = Mutex<[String: DeviceValue]??>(nil)
            Task {
                let status = await gateway.request("h10/request/recording", #"{"action":"status"}"#)
                answer.withLock { $0 = .some(status) }
            }
            // A second at a time until the answer comes: after the silence of the status request the driver makes on
            // connecting (if it still waits), then this one's.
            #expect(await clock.step(by: .seconds(1)) { answer.withLock { $0 } != nil })
            let status = answer.withLock { $0 } ?? nil
            #expect(Self.code(status) == "TIMEOUT", "\(String(describing: status))")
            #expect(status?["error"]?["message"]?.text?.contains("did not answer recording status") == true)
            #expect(clock.now - asked >= .seconds(10), "not before 10 s of silence")
            #expect(await gateway.request("h10/request/refresh")?["status"] == "ok")
        }
    }

    @Test("Home Assistant: a Recording binary sensor for the H10 alone, on the state's recording.active")
    func homeAssistantRecordingSensor() async throws {
        try await withStopping(started()) { gateway in
            func components(_ address: String) -> [String: DeviceValue]? {
                let object = "wear2mqtt_wear2mqtt_" + address.replacingOccurrences(of: ":", with: "").lowercased()
                return gateway.sink.retained("homeassistant/device/\(object)/config").flatMap { GatewayHarness.object($0.payload) }?["cmps"]?.object
            }
            #expect(await gateway.until(timeout: .seconds(60)) { components(Self.h10)?["recording"] != nil })
            let sensor = try #require(components(Self.h10)?["recording"])
            #expect(sensor["p"] == "binary_sensor" && sensor["state_topic"] == "test/h10")
            #expect(sensor["value_template"]?.text?.contains("value_json.recording.active") == true)
            #expect(await gateway.until { components(Self.sense)?["setting_sensor_ppg"] != nil })
            #expect(components(Self.sense)?["recording"] == nil, "the Verity Sense does not record on itself")
        }
    }
}
