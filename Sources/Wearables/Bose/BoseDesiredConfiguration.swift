/// The sensors and gestures the gateway wants running on a Bose device, in the contract's terms. The device
/// forgets its configuration whenever the link drops, so the driver keeps this and writes it again after every
/// reconnect.
///
/// `applying(_:to:)` is the whole validation of `request/configure`: it runs before anything is written and
/// refuses with `INVALID_VALUE` naming the field, so a bad request changes nothing.
public struct BoseDesiredConfiguration: Sendable, Equatable {
    /// Enabled sensors and their period in milliseconds (one shared value, as the device requires).
    public var sensorPeriods: [BoseSensor: UInt16]
    public var gestures: Set<BoseGesture>
    /// The period chosen with the top-level `period_ms`: what the enabled sensors share and what a sensor
    /// switched on alone (`enabled: true`) takes while no other runs. Nil until a request chooses one.
    public var chosenPeriod: UInt16?

    public init(sensorPeriods: [BoseSensor: UInt16] = [:], gestures: Set<BoseGesture> = [], chosenPeriod: UInt16? = nil) {
        self.sensorPeriods = sensorPeriods
        self.gestures = gestures
        self.chosenPeriod = chosenPeriod
    }

    /// The period the device's sensors share: the running one, else the one chosen, else nil.
    public var sharedPeriod: UInt16? { sensorPeriods.values.first ?? chosenPeriod }

    /// Periods every sensor of the device offers: the choices of the top-level `period_ms` that no set of
    /// enabled sensors can refuse.
    public static func commonPeriods(_ capabilities: BoseCapabilities) -> [UInt16] {
        let sets = capabilities.sensors.map { Set(capabilities.periods(of: $0).map(\.rawValue)) }
        guard let first = sets.first else { return [] }
        return sets.dropFirst().reduce(first) { $0.intersection($1) }.sorted()
    }

    /// What a sensor switched on with nothing else running and no period chosen takes: its offered period
    /// nearest to 40 ms (25 Hz, a common rate for head motion).
    static func defaultPeriod(of sensor: BoseSensor, _ capabilities: BoseCapabilities) -> UInt16? {
        capabilities.periods(of: sensor).map(\.rawValue).min { abs(Int($0) - 40) < abs(Int($1) - 40) }
    }

    /// Everything off: the device's own state after a connection.
    public static let none = BoseDesiredConfiguration()

    public var isEmpty: Bool { sensorPeriods.isEmpty && gestures.isEmpty }

    /// This configuration with `request` applied: named sensors and gestures change, the others keep their
    /// state. Accepted shape: `{"sensors":{"<sensor>":{"period_ms":20}|{"enabled":false}|{"enabled":true}},
    /// "gestures":{"<gesture>":true|false}}`; `period_ms` 0 disables, `enabled: true` alone takes the period
    /// the other enabled sensors run at.
    public func applying(_ request: [String: DeviceValue], to capabilities: BoseCapabilities) throws(CommandError) -> BoseDesiredConfiguration {
        let reader = RequestReader(request)
        try reader.rejectUnknownFields(allowed: ["sensors", "gestures", "period_ms"], request: "configure on Bose devices")
        var result = self
        if let period = try reader.integer("period_ms", in: 1...Int64(UInt16.max), unit: " milliseconds") {
            try result.applySharedPeriod(UInt16(period), capabilities)
        }
        if let sensors = try reader.nested("sensors") { try result.applySensors(sensors, capabilities) }
        if let gestures = try reader.nested("gestures") { try result.applyGestures(gestures, capabilities) }
        return result
    }

    /// `period_ms` at the top: every enabled sensor moves to it, and sensors switched on later take it.
    private mutating func applySharedPeriod(_ period: UInt16, _ capabilities: BoseCapabilities) throws(CommandError) {
        for sensor in sensorPeriods.keys.sorted() where !capabilities.periods(of: sensor).contains(where: { $0.rawValue == period }) {
            let list = capabilities.periods(of: sensor).map { String($0.rawValue) }.joined(separator: ", ")
            throw .invalidValue(field: "period_ms", "\(period) ms is not offered by the enabled \(sensor.kind.rawValue); it runs at \(list) ms")
        }
        guard !sensorPeriods.isEmpty || capabilities.sensors.contains(where: { sensor in
            capabilities.periods(of: sensor).contains { $0.rawValue == period }
        }) else {
            let list = Self.commonPeriods(capabilities).map(String.init).joined(separator: ", ")
            throw .invalidValue(field: "period_ms", "\(period) ms is offered by none of this device's sensors; all of them run at \(list) ms")
        }
        chosenPeriod = period
        for sensor in sensorPeriods.keys { sensorPeriods[sensor] = period }
    }

    private mutating func applySensors(_ sensors: RequestReader, _ capabilities: BoseCapabilities) throws(CommandError) {
        let available = capabilities.sensors
        let names = available.map(\.kind.rawValue).joined(separator: ", ")
        var wantsSharedPeriod: [BoseSensor] = []
        for name in sensors.arguments.keys.sorted() {
            let field = sensors.name(name)
            guard let kind = SensorKind(rawValue: name), let sensor = BoseSensor(kind: kind) else {
                throw .invalidValue(field: field, "unknown sensor; Bose devices have \(BoseSensor.allCases.map(\.kind.rawValue).joined(separator: ", "))")
            }
            guard available.contains(sensor) else {
                throw .invalidValue(field: field, "this device has no \(name); it has \(names)")
            }
            guard let settings = try sensors.nested(name) else { continue }
            try settings.rejectUnknownFields(allowed: ["period_ms", "enabled"], request: "a Bose sensor")
            let enabled = try settings.bool("enabled")
            var period: UInt16?
            let offered = capabilities.periods(of: sensor)
            let list = offered.map { String($0.rawValue) }.joined(separator: ", ")
            if let number = try settings.integer("period_ms", in: 0...Int64(UInt16.max), unit: " milliseconds (\(list), or 0 to disable)") {
                guard number == 0 || offered.contains(where: { Int64($0.rawValue) == number }) else {
                    throw .invalidValue(field: settings.name("period_ms"), "\(number) ms is not offered; \(name) runs at \(list) ms (0 disables)")
                }
                period = UInt16(number)
            }
            switch (enabled, period) {
            case (nil, nil):
                throw .invalidValue(field: field, "needs period_ms or enabled")
            case (false?, let period?) where period != 0:
                throw .invalidValue(field: field, "enabled is false but period_ms is \(period)")
            case (false?, _), (_, 0?):
                sensorPeriods[sensor] = nil
            case (_, let period?):
                sensorPeriods[sensor] = period
            case (true?, nil):
                wantsSharedPeriod.append(sensor)
            }
        }
        if !wantsSharedPeriod.isEmpty {
            let running = Set(sensorPeriods.values)
            guard running.count <= 1, let shared = running.first ?? chosenPeriod ?? Self.defaultPeriod(of: wantsSharedPeriod[0], capabilities) else {
                throw .invalidValue(field: "sensors.\(wantsSharedPeriod[0].kind.rawValue).period_ms",
                                    "is needed: the enabled sensors run at different periods")
            }
            for sensor in wantsSharedPeriod where capabilities.periods(of: sensor).contains(where: { $0.rawValue == shared }) {
                sensorPeriods[sensor] = shared
            }
            if let unmatched = wantsSharedPeriod.first(where: { sensorPeriods[$0] == nil }) {
                throw .invalidValue(field: "sensors.\(unmatched.kind.rawValue)", "does not offer the \(shared) ms the other sensors run at")
            }
        }
        let periods = Set(sensorPeriods.values)
        if periods.count > 1 {
            let listing = sensorPeriods.sorted { $0.key < $1.key }.map { "\($0.key.kind.rawValue) at \($0.value) ms" }.joined(separator: ", ")
            throw .invalidValue(field: "sensors", "all enabled sensors share one period on Bose devices; this would run \(listing)")
        }
        if sensorPeriods.count > capabilities.maxActiveSensors {
            throw .invalidValue(field: "sensors", "this device runs at most \(capabilities.maxActiveSensors) sensors at once; this would enable \(sensorPeriods.count) (\(sensorPeriods.keys.sorted().map(\.kind.rawValue).joined(separator: ", ")))")
        }
    }

    private mutating func applyGestures(_ gestures: RequestReader, _ capabilities: BoseCapabilities) throws(CommandError) {
        let available = capabilities.gestures
        for name in gestures.arguments.keys.sorted() {
            let field = gestures.name(name)
            guard let gesture = BoseGesture(name: name) else {
                throw .invalidValue(field: field, "unknown gesture; Bose devices have \(BoseGesture.allCases.map(\.name).joined(separator: ", "))")
            }
            guard available.contains(gesture) else {
                throw .invalidValue(field: field, "this device does not detect \(name); it detects \(available.map(\.name).joined(separator: ", "))")
            }
            guard let enabled = try gestures.bool(name) else { continue }
            if enabled { self.gestures.insert(gesture) } else { self.gestures.remove(gesture) }
        }
    }

    /// The configuration as `request/configure` would set it from nothing, listing every sensor and gesture of
    /// the device: the answer to `configure` and what a restart re-applies.
    public func requestForm(for capabilities: BoseCapabilities) -> [String: DeviceValue] {
        var sensors: [String: DeviceValue] = [:]
        for sensor in capabilities.sensors {
            sensors[sensor.kind.rawValue] = .object(["period_ms": .integer(Int64(sensorPeriods[sensor] ?? 0))])
        }
        var gestures: [String: DeviceValue] = [:]
        for gesture in capabilities.gestures { gestures[gesture.name] = .flag(self.gestures.contains(gesture)) }
        var form: [String: DeviceValue] = ["sensors": .object(sensors), "gestures": .object(gestures)]
        if let chosenPeriod { form["period_ms"] = .integer(Int64(chosenPeriod)) }
        return form
    }
}

extension BoseSensorConfiguration {
    /// The device state's `sensors`: `{"accelerometer":{"enabled":true,"period_ms":20},"gyroscope":{"enabled":false,
    /// "period_ms":null}}` — `null` so the merge into the retained state drops an old period.
    public var stateFields: [String: DeviceValue] {
        var fields: [String: DeviceValue] = [:]
        for entry in entries {
            guard let sensor = BoseSensor(rawValue: entry.sensorID) else { continue }
            fields[sensor.kind.rawValue] = entry.periodMilliseconds == 0
                ? .object(["enabled": .flag(false), "period_ms": .null])
                : .object(["enabled": .flag(true), "period_ms": .integer(Int64(entry.periodMilliseconds))])
        }
        return fields
    }
}

extension BoseGestureConfiguration {
    /// The device state's `gestures`: `{"double_tap":true,"head_nod":false}`.
    public var stateFields: [String: DeviceValue] {
        var fields: [String: DeviceValue] = [:]
        for entry in entries {
            guard let gesture = BoseGesture(rawValue: entry.gestureID) else { continue }
            fields[gesture.name] = .flag(entry.isEnabled)
        }
        return fields
    }
}
