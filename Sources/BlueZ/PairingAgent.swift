import DBus
import Logging

/// What BlueZ asks while pairing (bluez `doc/org.bluez.Agent.rst`).
public enum PairingRequest: Sendable, Equatable {
    /// Type the 6-digit passkey the device shows.
    case passkey(device: ObjectPath)
    /// A legacy PIN code.
    case pinCode(device: ObjectPath)
    /// Confirm that the device shows this passkey.
    case confirmation(device: ObjectPath, passkey: UInt32)
    /// Show this passkey so the user can type it on the device.
    case displayPasskey(device: ObjectPath, passkey: UInt32, entered: UInt16)
    case displayPinCode(device: ObjectPath, pinCode: String)
    /// Allow a device to pair without a code ("just works").
    case authorization(device: ObjectPath)
    case serviceAuthorization(device: ObjectPath, uuid: String)
}

public enum PairingAnswer: Sendable, Equatable {
    case passkey(UInt32)
    case pinCode(String)
    case accept
    case reject
}

/// The Agent1 object BlueZ calls while pairing. Every request is handed to `handler` (the gateway, which asks
/// the user over MQTT); the agent only translates between D-Bus and those values. Registered as the default
/// agent with capability KeyboardDisplay, and again after bluetoothd restarts (`register()`).
public final class PairingAgent: Sendable {
    public static let path: ObjectPath = "/org/wear2mqtt/agent"
    private let client: BlueZClient
    private let handler: @Sendable (PairingRequest) async -> PairingAnswer

    public init(client: BlueZClient, handler: @escaping @Sendable (PairingRequest) async -> PairingAnswer) {
        self.client = client
        self.handler = handler
        client.connection.objects.export(Self.path, interfaces: [(definition, [:])])
    }

    /// RegisterAgent and RequestDefaultAgent with AgentManager1.
    public func register(capability: String = "KeyboardDisplay") async throws(BlueZError) {
        do {
            _ = try await client.call(BlueZNames.bluezPath, BlueZNames.agentManager, "RegisterAgent",
                                      [.objectPath(Self.path), .string(capability)])
        } catch .failed(let name, _) where name == BlueZErrorName.alreadyExists {
            // Registered already (by this connection).
        }
        _ = try await client.call(BlueZNames.bluezPath, BlueZNames.agentManager, "RequestDefaultAgent",
                                  [.objectPath(Self.path)])
    }

    /// Registers now and again each time bluetoothd comes back (a restarted bluetoothd has forgotten every
    /// agent). Runs until the surrounding task is cancelled.
    public func keepRegistered(capability: String = "KeyboardDisplay") async {
        let updates = client.events()
        if client.isServiceAvailable { try? await register(capability: capability) }
        for await event in updates where event == .reset && client.isServiceAvailable {
            do {
                try await register(capability: capability)
            } catch {
                client.logger.warning("could not register the pairing agent", metadata: ["error": "\(error)"])
            }
        }
    }

    private var definition: InterfaceDefinition {
        let handler = handler
        let ask = handler
        let rejected = BusError.remote(name: BlueZErrorName.rejected, message: "rejected by the user")
        let device: @Sendable (MethodCall) -> ObjectPath = { $0.arguments.first?.objectPathValue ?? "/" }
        return InterfaceDefinition(BlueZNames.agent, methods: [
            MethodDefinition("Release", input: "") { _ in [] },
            MethodDefinition("Cancel", input: "") { _ in [] },
            MethodDefinition("RequestPinCode", input: "o", output: "s") { call throws(BusError) in
                guard case .pinCode(let pin) = await ask(.pinCode(device: device(call))) else { throw rejected }
                return [.string(pin)]
            },
            MethodDefinition("DisplayPinCode", input: "os") { call in
                _ = await ask(.displayPinCode(device: device(call), pinCode: call.arguments[1].stringValue ?? ""))
                return []
            },
            MethodDefinition("RequestPasskey", input: "o", output: "u") { call throws(BusError) in
                guard case .passkey(let passkey) = await ask(.passkey(device: device(call))) else { throw rejected }
                return [.uint32(passkey)]
            },
            MethodDefinition("DisplayPasskey", input: "ouq") { call in
                _ = await ask(.displayPasskey(device: device(call),
                                              passkey: UInt32(call.arguments[1].integerValue ?? 0),
                                              entered: UInt16(call.arguments[2].integerValue ?? 0)))
                return []
            },
            MethodDefinition("RequestConfirmation", input: "ou") { call throws(BusError) in
                let answer = await ask(.confirmation(device: device(call), passkey: UInt32(call.arguments[1].integerValue ?? 0)))
                guard answer == .accept else { throw rejected }
                return []
            },
            MethodDefinition("RequestAuthorization", input: "o") { call throws(BusError) in
                guard await ask(.authorization(device: device(call))) == .accept else { throw rejected }
                return []
            },
            MethodDefinition("AuthorizeService", input: "os") { call throws(BusError) in
                let answer = await ask(.serviceAuthorization(device: device(call), uuid: call.arguments[1].stringValue ?? ""))
                guard answer == .accept else { throw rejected }
                return []
            },
        ])
    }
}
