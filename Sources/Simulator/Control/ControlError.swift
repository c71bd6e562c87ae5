import BlueZ
import Wearables
import SimulatedWearables

/// Errors of the control interface (`org.wear2mqtt.Simulator1`), named in its own namespace so a test never
/// mistakes them for something BlueZ said.
enum ControlError {
    static let prefix = "org.wear2mqtt.Simulator.Error."

    static func noSuchDevice(_ address: BluetoothAddress) -> BlueZErrorReply {
        BlueZErrorReply(name: prefix + "NoSuchDevice", message: "no simulated device has address \(address)")
    }

    static func notConnected(_ address: BluetoothAddress) -> BlueZErrorReply {
        BlueZErrorReply(name: prefix + "NotConnected", message: "\(address) has no link to drop")
    }

    static func eventNotSupported(_ event: DeviceEvent, _ address: BluetoothAddress) -> BlueZErrorReply {
        BlueZErrorReply(name: prefix + "NotSupported", message: "\(address) has nothing that reacts to \(event.rawValue)")
    }

    static func invalidArgument(_ message: String) -> BlueZErrorReply {
        BlueZErrorReply(name: prefix + "InvalidArgument", message: message)
    }

    /// A radio fault asked of an adapter that is removed, or removed twice.
    static let adapterRemoved = BlueZErrorReply(name: prefix + "AdapterRemoved",
                                                message: "the adapter is removed (RestoreAdapter brings it back)")

    /// RestoreAdapter while the adapter is there.
    static let adapterPresent = BlueZErrorReply(name: prefix + "AdapterPresent",
                                                message: "the adapter is present (RemoveAdapter takes it away)")
}
