import Wearables
import Firmware

/// What a simulated DFU half sends to the central, in order. Writes are answered inside the actor; a delivery task
/// per connection pushes these afterwards, so a write's response precedes what it caused, as on the air.
enum SimulatedDFUOutgoing: Sendable {
    case notify(BluetoothUUID, [UInt8])
    case indicate(BluetoothUUID, [UInt8])
    /// The device drops the link (after what was queued before).
    case hangUp

    /// Pushes what `outbox` holds until it finishes or a hang-up ends the link.
    static func deliver(_ outbox: AsyncStream<SimulatedDFUOutgoing>, on link: any PeripheralLink) async {
        for await item in outbox {
            switch item {
            case .notify(let characteristic, let value): await link.notify(characteristic, value: value)
            case .indicate(let characteristic, let value): await link.indicate(characteristic, value: value)
            case .hangUp:
                await link.disconnect()
                return
            }
        }
    }
}
