import BlueZ
import DBus
import Wearables
import SimulatedWearables

/// `org.wear2mqtt.Simulator1` at `/org/wear2mqtt/simulator`, owned as `org.wear2mqtt.Simulator` on a connection
/// of its own, so that the `org.bluez` object tree stays exactly what BlueZ exports. Tests and
/// `wear2mqtt-sim control` use it to inject faults and device-side events and to read back what devices received
/// and what they show (`Inspect`: a band's pairing code, its counters).
public enum SimulatorControl {
    public static let busName = "org.wear2mqtt.Simulator"
    public static let path: ObjectPath = "/org/wear2mqtt/simulator"
    public static let interface = "org.wear2mqtt.Simulator1"

    static func address(_ value: DBusValue) throws(BlueZErrorReply) -> BluetoothAddress {
        guard let text = value.stringValue, let address = BluetoothAddress.colonSeparated(text) else {
            throw ControlError.invalidArgument("\(value) is not a Bluetooth address like AA:BB:CC:DD:EE:FF")
        }
        return address
    }

    /// An empty string is "the adapter".
    static func optionalAddress(_ value: DBusValue) throws(BlueZErrorReply) -> BluetoothAddress? {
        value.stringValue?.isEmpty ?? true ? nil : try address(value)
    }

    static func errorReply(_ value: DBusValue, default fallback: BlueZErrorReply) throws(BlueZErrorReply) -> BlueZErrorReply {
        let text = value.stringValue ?? ""
        if text.isEmpty { return fallback }
        // "Failed: Operation failed with ATT error: 0x81" gives the reply a message of its own.
        let parts = text.split(separator: ": ", maxSplits: 1).map(String.init)
        guard let reply = BlueZErrorReply(named: parts[0], message: parts.count > 1 ? parts[1] : nil) else {
            throw ControlError.invalidArgument("\"\(text)\" is not a D-Bus error name such as org.bluez.Error.InProgress")
        }
        return reply
    }

    static func definition(_ daemon: SimulatedBluetoothDaemon) -> InterfaceDefinition {
        func action(_ name: String, _ input: String,
                    _ make: @escaping @Sendable ([DBusValue]) throws(BlueZErrorReply) -> SimulatorAction) -> MethodDefinition {
            MethodDefinition(name, input: input) { call throws(BusError) in
                try await BlueZInterfaces.answer { () throws(BlueZErrorReply) in
                    try await daemon.apply(try make(call.arguments))
                    return []
                }
            }
        }
        return InterfaceDefinition(interface, methods: [
            action("DropLink", "s") { arguments throws(BlueZErrorReply) in .dropLink(try address(arguments[0])) },
            action("RefuseConnects", "sus") { arguments throws(BlueZErrorReply) in
                .refuseConnects(try address(arguments[0]), count: Int(arguments[1].integerValue ?? 1),
                                error: try errorReply(arguments[2], default: .leConnectionAbortByLocal))
            },
            action("SetAdvertising", "sb") { arguments throws(BlueZErrorReply) in
                .setAdvertising(try address(arguments[0]), arguments[1].boolValue ?? true)
            },
            action("SetLatency", "su") { arguments throws(BlueZErrorReply) in
                .setLatency(try optionalAddress(arguments[0]), .milliseconds(arguments[1].integerValue ?? 0))
            },
            action("FailNextCall", "sss") { arguments throws(BlueZErrorReply) in
                guard let method = arguments[1].stringValue, !method.isEmpty else {
                    throw ControlError.invalidArgument("name the method, such as Connect or ReadValue")
                }
                return .failNextCall(try optionalAddress(arguments[0]), method: method,
                                     error: try errorReply(arguments[2], default: .busy))
            },
            action("SetPowered", "b") { arguments throws(BlueZErrorReply) in .setPowered(arguments[0].boolValue ?? true) },
            action("RaiseEvent", "ss") { arguments throws(BlueZErrorReply) in
                guard let name = arguments[1].stringValue, let event = DeviceEvent(rawValue: name) else {
                    let known = DeviceEvent.allCases.map(\.rawValue).joined(separator: ", ")
                    throw ControlError.invalidArgument("\(arguments[1]) is not an event (\(known))")
                }
                return .deviceEvent(try address(arguments[0]), event)
            },
            action("PressButton", "s") { arguments throws(BlueZErrorReply) in .deviceEvent(try address(arguments[0]), .buttonPress) },
            action("SetRSSI", "sn") { arguments throws(BlueZErrorReply) in
                .setRSSI(try address(arguments[0]), Int(arguments[1].integerValue ?? -60))
            },
            action("SetRSSINoise", "sqt") { arguments throws(BlueZErrorReply) in
                let amplitude = Int(arguments[1].integerValue ?? 0)
                guard (0...RSSINoise.maximumAmplitude).contains(amplitude) else {
                    throw ControlError.invalidArgument("\(amplitude) dB is outside 0…\(RSSINoise.maximumAmplitude)")
                }
                guard case .uint64(let seed) = arguments[2].unwrapped else {
                    throw ControlError.invalidArgument("\(arguments[2]) is not a seed (uint64)")
                }
                return .setRSSINoise(try address(arguments[0]), amplitude: amplitude, seed: seed)
            },
            action("DeafenScanner", "s") { arguments throws(BlueZErrorReply) in
                let text = arguments[0].stringValue ?? ""
                guard let cure = DeafScannerCure(rawValue: text) else {
                    let known = DeafScannerCure.allCases.map(\.rawValue).joined(separator: " or ")
                    throw ControlError.invalidArgument("\"\(text)\" is not what clears a deaf scanner (\(known))")
                }
                return .deafenScanner(clearedBy: cure)
            },
            action("StickDiscovery", "") { _ throws(BlueZErrorReply) in .stickDiscovery },
            action("RemoveAdapter", "") { _ throws(BlueZErrorReply) in .removeAdapter },
            action("RestoreAdapter", "") { _ throws(BlueZErrorReply) in .restoreAdapter },
            MethodDefinition("GetReceived", input: "ss", output: "aay") { call throws(BusError) in
                try await BlueZInterfaces.answer { () throws(BlueZErrorReply) in
                    let device = try address(call.arguments[0])
                    guard let text = call.arguments[1].stringValue, let uuid = BluetoothUUID(string: text) else {
                        throw ControlError.invalidArgument("\(call.arguments[1]) is not a UUID")
                    }
                    let values = try await daemon.received(device, characteristic: uuid)
                    return [.array(elementSignature: "ay", values.map(DBusValue.bytes))]
                }
            },
            MethodDefinition("Inspect", input: "s", output: "a{ss}") { call throws(BusError) in
                try await BlueZInterfaces.answer { () throws(BlueZErrorReply) in
                    // An empty address: the adapter (its radio faults and counts).
                    let values = if let device = try optionalAddress(call.arguments[0]) {
                        try await daemon.inspect(device)
                    } else {
                        await daemon.inspectAdapter()
                    }
                    return [.dictionary(keySignature: "s", valueSignature: "s", values.sorted { $0.key < $1.key }.map {
                        DBusValue.DictionaryEntry(.string($0.key), .string($0.value))
                    })]
                }
            },
            MethodDefinition("ListDevices", output: "a(sss)") { _ throws(BusError) in
                let summaries = await daemon.deviceSummaries()
                return [.array(elementSignature: "(sss)", summaries.map {
                    .structure([.string($0.address), .string($0.kind), .string($0.state)])
                })]
            },
        ])
    }
}
