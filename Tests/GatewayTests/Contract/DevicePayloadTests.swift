import MQTT
import Testing
import Wearables

@testable import Gateway

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// Runs one mutation of the state and returns whether it reported a change (`#expect` cannot mutate).
private func changed(_ state: inout DeviceStateDocument, _ mutation: (inout DeviceStateDocument) -> Bool) -> Bool {
    mutation(&state)
}

@Suite("Device payloads: availability, gesture, event, fitness records")
struct DevicePayloadTests {
    @Test("availability is {\"state\":\"online\"} or {\"state\":\"offline\"}")
    func availability() {
        #expect(text(DevicePayload.availability(online: true)) == #"{"state":"online"}"#)
        #expect(text(DevicePayload.availability(online: false)) == #"{"state":"offline"}"#)
    }

    @Test("a gesture is {ts,gesture}")
    func gesture() {
        #expect(text(DevicePayload.gesture(name: "double_tap", timestamp: 1_700_000_000_123))
            == #"{"ts":1700000000123,"gesture":"double_tap"}"#)
    }

    @Test("an event is {ts,event,…details} with details sorted; details cannot replace ts or event")
    func event() {
        #expect(text(DevicePayload.event(name: "find_phone", timestamp: 5, details: [:])) == #"{"ts":5,"event":"find_phone"}"#)
        #expect(text(DevicePayload.event(name: "tag", timestamp: 5, details: ["z": 1, "a": ["x": "y"], "ts": 9, "event": "other"]))
            == #"{"ts":5,"event":"tag","a":{"x":"y"},"z":1}"#)
    }

    @Test("a fitness record is {id,ts,…fields} with fields sorted; fields cannot replace id or ts")
    func record() {
        let record = FitnessRecord(kind: "steps", id: "band-steps-1700000000000", timestamp: 1_700_000_000_000,
                                   fields: ["steps": 1234, "distance_m": 912.5, "calories_kcal": 48, "id": "x", "ts": 1])
        #expect(text(DevicePayload.record(record))
            == #"{"id":"band-steps-1700000000000","ts":1700000000000,"calories_kcal":48,"distance_m":912.5,"steps":1234}"#)
    }
}

@Suite("Retained device state")
struct DeviceStateDocumentTests {
    @Test("a new device is {\"connection\":\"disconnected\"}")
    func initial() {
        #expect(text(DeviceStateDocument().json) == #"{"connection":"disconnected"}"#)
    }

    @Test("drivers' state patches merge key by key at every depth, null removes, keys come out sorted")
    func mergePatch() {
        var state = DeviceStateDocument()
        #expect(changed(&state) { $0.apply(.state(["battery": 80, "firmware": "1.2.3", "sensors": ["eda": ["enabled": true, "period_ms": 250]]])) } == true)
        #expect(changed(&state) { $0.apply(.state(["battery": 79, "sensors": ["bvp": ["enabled": false]]])) } == true)
        #expect(text(state.json)
            == #"{"battery":79,"connection":"disconnected","firmware":"1.2.3","sensors":{"bvp":{"enabled":false},"eda":{"enabled":true,"period_ms":250}}}"#)
        #expect(changed(&state) { $0.apply(.state(["sensors": ["eda": ["period_ms": nil]], "firmware": nil])) } == true)
        #expect(text(state.json)
            == #"{"battery":79,"connection":"disconnected","sensors":{"bvp":{"enabled":false},"eda":{"enabled":true}}}"#)
    }

    @Test("an unchanged patch reports no change, so nothing is republished")
    func noChange() {
        var state = DeviceStateDocument()
        state.merge(["battery": 80, "serial": "A1"])
        #expect(changed(&state) { $0.merge(["battery": 80]) } == false)
        #expect(changed(&state) { $0.merge(["missing": nil]) } == false)
        #expect(changed(&state) { $0.apply(.gesture(name: "tap", timestamp: 1)) } == false)
        #expect(changed(&state) { $0.setConnection("disconnected") } == false)
        #expect(changed(&state) { $0.setConnection("connected") } == true)
    }

    @Test("connection and last_seen belong to the gateway; a driver's patch cannot change them")
    func gatewayKeys() {
        var state = DeviceStateDocument(connection: "connected")
        #expect(changed(&state) { $0.merge(["connection": "disconnected", "last_seen": 1]) } == false)
        #expect(changed(&state) { $0.setLastSeen(1_700_000_000_000) } == true)
        #expect(changed(&state) { $0.setRSSI(-61) } == true)
        #expect(text(state.json) == #"{"connection":"connected","last_seen":1700000000000,"rssi":-61}"#)
        #expect(changed(&state) { $0.setRSSI(nil) } == true)
        #expect(text(state.json) == #"{"connection":"connected","last_seen":1700000000000}"#)
    }

    @Test("progress becomes update/sync objects; sync's last_ts survives the return to idle")
    func progress() {
        var state = DeviceStateDocument(connection: "connected")
        #expect(changed(&state) { $0.apply(.progress(key: "update", OperationProgress(state: "updating", percent: 42.5, remainingSeconds: 30))) } == true)
        #expect(changed(&state) { $0.apply(.progress(key: "sync", OperationProgress(state: "syncing", percent: 10, lastTimestamp: 1_700_000_000_000))) } == true)
        #expect(text(state.json)
            == #"{"connection":"connected","sync":{"last_ts":1700000000000,"progress":10.0,"state":"syncing"},"update":{"progress":42.5,"remaining_s":30.0,"state":"updating"}}"#)
        #expect(changed(&state) { $0.apply(.progress(key: "sync", OperationProgress(state: "idle"))) } == true)
        #expect(changed(&state) { $0.apply(.progress(key: "update", OperationProgress(state: "idle"))) } == true)
        #expect(text(state.json)
            == #"{"connection":"connected","sync":{"last_ts":1700000000000,"state":"idle"},"update":{"state":"idle"}}"#)
        #expect(changed(&state) { $0.apply(.progress(key: "connection", OperationProgress(state: "idle"))) } == false)
    }
}

@Suite("Bridge payloads")
struct BridgePayloadTests {
    @Test("bridge/devices is an array sorted by id, keys in the contract's order, unknowns null")
    func devices() {
        let entries = [
            BridgeDeviceEntry(id: "tag", address: "FF:FF:10:00:00:01", driver: "immediate_alert", capabilities: ["find"], connected: true),
            BridgeDeviceEntry(id: "chest", name: "chest", vendor: "Polar", model: "H10", address: "A4:C1:38:F0:0B:1E",
                              driver: "heart_rate", capabilities: ["heart_rate", "battery"], paired: true, connected: false),
        ]
        #expect(text(BridgePayload.devices(entries)) == """
            [{"id":"chest","name":"chest","vendor":"Polar","model":"H10","address":"A4:C1:38:F0:0B:1E","driver":"heart_rate",\
            "capabilities":["heart_rate","battery"],"paired":true,"connected":false},\
            {"id":"tag","name":null,"vendor":null,"model":null,"address":"FF:FF:10:00:00:01","driver":"immediate_alert",\
            "capabilities":["find"],"paired":false,"connected":true}]
            """)
        #expect(text(BridgePayload.devices([])) == "[]")
    }

    @Test("bridge/event is {type,data}")
    func event() {
        #expect(text(BridgePayload.event(BridgeEvent(.deviceFound, data: ["rssi": -70, "address": "AA:BB:CC:DD:EE:FF", "name": "Polar H10"])))
            == #"{"type":"device_found","data":{"address":"AA:BB:CC:DD:EE:FF","name":"Polar H10","rssi":-70}}"#)
        #expect(text(BridgePayload.event(BridgeEvent(.adapterChanged))) == #"{"type":"adapter_changed","data":{}}"#)
        #expect(BridgeEvent.Kind.allCases.map(\.rawValue) == [
            "device_found", "device_connected", "device_disconnected", "device_paired", "device_added", "device_removed",
            "adapter_changed", "radio_changed",
        ])
    }

    @Test("bridge/health has uptime, RSS, the MQTT queues and per-device rates sorted by id")
    func health() {
        var statistics = MQTTClientStatistics()
        statistics.connected = true
        statistics.offlineQueued = 3
        statistics.offlineDropped = 17
        statistics.spoolPending = 2
        statistics.incomingDropped = 4
        statistics.incomingOversized = 5
        statistics.spoolBytes = 512
        statistics.spoolFailures = 6
        statistics.published = 9000
        let report = HealthReport(
            uptimeSeconds: 3600, residentBytes: 12_582_912, mqtt: HealthReport.MQTTStatus(statistics),
            devices: ["tag": .init(messagesPerSecond: 0, connected: false), "band": .init(messagesPerSecond: 52.5, connected: true, queuedCommands: 1)])
        #expect(text(BridgePayload.health(report)) == """
            {"uptime_s":3600,"rss_bytes":12582912,\
            "mqtt":{"connected":true,"queued":3,"dropped":17,"incoming_dropped":4,"incoming_oversized":5,"incoming_pauses":0,"incoming_pauses_cut_short":0,"spool_pending":2,"spool_bytes":512,"spool_failures":6,"published":9000},\
            "devices":{"band":{"messages_per_s":52.5,"connected":true,"queued_commands":1},\
            "tag":{"messages_per_s":0.0,"connected":false,"queued_commands":0}}}
            """)
        let unknownRSS = HealthReport(uptimeSeconds: 0, residentBytes: nil, mqtt: HealthReport.MQTTStatus())
        #expect(text(BridgePayload.health(unknownRSS)).hasPrefix(#"{"uptime_s":0,"rss_bytes":null,"#))
    }
}

@Suite("Messages: topic, retain and QoS per the contract")
struct ContractMessagesTests {
    let messages = ContractMessages(topics: TopicLayout(base: "wear2mqtt"))

    @Test("availability and state are retained QoS 1; gestures, events and records QoS 1; health QoS 0")
    func table() {
        let availability = messages.availability("band", online: true)
        #expect((availability.topic, availability.retain, availability.qos) == ("wear2mqtt/band/availability", true, .atLeastOnce))
        let state = messages.state("band", DeviceStateDocument())
        #expect((state.topic, state.retain, state.qos) == ("wear2mqtt/band", true, .atLeastOnce))
        let gesture = messages.gesture("band", name: "double_tap", timestamp: 1)
        #expect((gesture.topic, gesture.retain, gesture.qos) == ("wear2mqtt/band/gesture", false, .atLeastOnce))
        let event = messages.event("tag", name: "tag", timestamp: 1, details: [:])
        #expect((event.topic, event.retain, event.qos) == ("wear2mqtt/tag/event", false, .atLeastOnce))
        let record = messages.record("band", FitnessRecord(kind: "sleep", id: "s1", timestamp: 1, fields: [:]))
        #expect((record.topic, record.retain, record.qos) == ("wear2mqtt/band/fitness/sleep", false, .atLeastOnce))
        let devices = messages.bridgeDevices([])
        #expect((devices.topic, devices.retain, devices.qos) == ("wear2mqtt/bridge/devices", true, .atLeastOnce))
        let bridgeEvent = messages.bridgeEvent(BridgeEvent(.deviceAdded))
        #expect((bridgeEvent.topic, bridgeEvent.retain, bridgeEvent.qos) == ("wear2mqtt/bridge/event", false, .atLeastOnce))
        let health = messages.health(HealthReport(uptimeSeconds: 1, residentBytes: nil, mqtt: .init()))
        #expect((health.topic, health.retain, health.qos) == ("wear2mqtt/bridge/health", false, .atMostOnce))
        #expect(health.properties.contentType == "application/json")
    }

    @Test("samples are QoS 0 and not retained unless the device's options say so")
    func samples() {
        let sample = SensorSample(sensor: .temperature, timestamp: 1, reading: .celsius(36.6))
        let publication = SamplePublication(device: "thermo", sensor: .temperature, samples: [sample], isBatch: false)
        let plain = messages.samples(publication)
        #expect((plain.topic, plain.retain, plain.qos) == ("wear2mqtt/thermo/sensor/temperature", false, .atMostOnce))
        #expect(String(decoding: plain.payload, as: UTF8.self) == #"{"ts":1,"celsius":36.6}"#)
        let overridden = messages.samples(publication, qos: .atLeastOnce, retain: true)
        #expect((overridden.retain, overridden.qos) == (true, .atLeastOnce))
    }

    @Test("removing a device clears its retained state and availability with empty payloads")
    func removal() {
        let removal = messages.removal("band")
        #expect(removal.map(\.topic) == ["wear2mqtt/band", "wear2mqtt/band/availability"])
        #expect(removal.allSatisfy { $0.payload.isEmpty && $0.retain })
    }
}
