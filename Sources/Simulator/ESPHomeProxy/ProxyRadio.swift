import ESPHome
import EventLoop
import Synchronization

/// The simulated proxy's Bluetooth side: the scenario's devices in range, the scanner that hears them, the connection
/// slots and the links, serving ESPHome's `bluetooth_proxy` requests on the proxy's one event loop. Waits (connect
/// delay, ATT round trips, the peripherals' own calls) run in tasks that hop back to the loop with their outcome.
///
/// As ESPHome's proxy does, it serves one subscriber: the API connection that last subscribed to advertisements
/// (the newest wins). Connection, GATT and slot answers go to that subscriber whichever client asked; with no
/// subscriber nothing is answered and every device link is torn down (ESPHome's `loop()`), so a client must subscribe
/// to advertisements before it connects to a device. Only `SubscribeBluetoothConnectionsFree` is answered to the
/// client that sends it.
final class ProxyRadio: Sendable {
    enum Phase {
        case connecting(generation: Int, withCache: Bool)
        case connected(Connected)
    }

    struct Connected {
        let link: ProxyLink
        let withCache: Bool
        /// Which connect this link came from: a late event of an earlier link to the same device is ignored.
        let generation: Int
        /// Handles the client asked to hear notifications of (`BluetoothGATTNotifyRequest`).
        var registered: Set<UInt16> = []
    }

    struct State {
        var devices: [UInt64: ProxiedDevice]
        var slots: ConnectionSlots
        var phases: [UInt64: Phase] = [:]
        var subscriber: Int32?
        var batcher = AdvertisementBatcher()
        var ticking = false
        /// Ticks since the start: a test waits for ticks, not for time, before saying nothing was heard.
        var ticks = 0
        var generation = 0
        /// False while every device is out of the proxy's range (`walkOutOfRange`): nothing is heard, nothing connects.
        var inRange = true
    }

    struct Settings: Sendable {
        /// ESP-IDF's local MTU in ESPHome; a link gets the smaller of this and the device's.
        var localMTU = 517
        /// How long a connect to a device that never answers waits before it fails.
        var connectTimeout: Duration = .seconds(20)
        /// Whether the client gets 16-bit UUIDs in `short_uuid` (API 1.12 and later; see `ProxyGATTTable`).
        var efficientUUIDs = true
    }

    static let tick: Duration = .milliseconds(100)

    let loop: EventLoop
    let settings: Settings
    let state: LoopBound<State>
    /// Writes a message to one API connection (the server's); set once before the loop serves.
    private let sink = Mutex<(@Sendable (Int32, APIMessage) -> Void)?>(nil)

    init(devices: [ProxiedDevice], slots: Int, settings: Settings, loop: EventLoop) {
        self.loop = loop
        self.settings = settings
        let byAddress = Dictionary(devices.map { ($0.address, $0) }, uniquingKeysWith: { first, _ in first })
        state = LoopBound(State(devices: byAddress, slots: ConnectionSlots(limit: slots)), loop: loop)
    }

    func attach(_ send: @escaping @Sendable (Int32, APIMessage) -> Void) {
        sink.withLock { $0 = send }
    }

    func send(_ message: APIMessage, to descriptor: Int32) {
        sink.withLock { $0 }?(descriptor, message)
    }

    /// To the subscriber, if there is one.
    func publish(_ message: APIMessage) {
        guard let subscriber = state.value.subscriber else { return }
        send(message, to: subscriber)
    }

    func publishSlots() {
        publish(APIMessage(.bluetoothConnectionsFreeResponse, state.value.slots.response))
    }

    func publishConnection(_ address: UInt64, connected: Bool, mtu: Int = 0, error: Int32 = 0) {
        var response = BluetoothDeviceConnectionResponse()
        response.address = address
        response.connected = connected
        response.mtu = UInt32(mtu)
        response.error = error
        publish(APIMessage(.bluetoothDeviceConnectionResponse, response))
    }

    func publishGATTError(_ address: UInt64, _ handle: UInt32, _ error: Int32) {
        var response = BluetoothGATTErrorResponse()
        response.address = address
        response.handle = handle
        response.error = error
        publish(APIMessage(.bluetoothGATTErrorResponse, response))
    }

    // MARK: Requests

    /// A message the connection's state machine delivered (anything but hello, device info and pings).
    func handle(_ message: APIMessage, from descriptor: Int32) {
        loop.assertInEventLoop()
        switch APIMessageType(rawValue: message.type) {
        case .subscribeBluetoothLEAdvertisementsRequest?:
            subscribe(descriptor)
        case .unsubscribeBluetoothLEAdvertisementsRequest?:
            if state.value.subscriber == descriptor { unsubscribe() }
        case .subscribeBluetoothConnectionsFreeRequest?:
            send(APIMessage(.bluetoothConnectionsFreeResponse, state.value.slots.response), to: descriptor)
        case .bluetoothScannerSetModeRequest?:
            let request = message.decoded(as: BluetoothScannerSetModeRequest.self) ?? BluetoothScannerSetModeRequest()
            publishScannerState(mode: request.mode)
        case .bluetoothDeviceRequest?:
            if let request = message.decoded(as: BluetoothDeviceRequest.self) { deviceRequest(request) }
        default:
            gattRequest(message)
        }
    }

    /// The API connection closed: if it was the subscriber, the proxy is left without one.
    func clientLeft(_ descriptor: Int32) {
        loop.assertInEventLoop()
        if state.value.subscriber == descriptor { unsubscribe() }
    }

    private func subscribe(_ descriptor: Int32) {
        if state.value.subscriber != descriptor { state.value.batcher.reset() }
        state.value.subscriber = descriptor
        publishScannerState(mode: .active)
        let now = ContinuousClock.now
        // The first advertisement of each device comes within its interval, as a scan that just started hears them.
        for address in state.value.devices.keys.sorted() where state.value.devices[address]?.nextSighting == nil {
            guard var device = state.value.devices[address] else { continue }
            device.nextSighting = now + device.settings.advertisingInterval * Double.random(in: 0.05...1, using: &device.random)
            state.value.devices[address] = device
        }
        if !state.value.ticking {
            state.value.ticking = true
            scheduleTick()
        }
    }

    /// The server stops: every link ends (the peripherals' behaviour is cancelled).
    func shutDown() {
        state.value.subscriber = nil
        for address in Array(state.value.phases.keys) { endLink(address) }
    }

    private func unsubscribe() {
        state.value.subscriber = nil
        state.value.batcher.reset()
        // ESPHome's loop tears every link down once nobody is subscribed; nobody hears about it.
        for address in Array(state.value.phases.keys) { endLink(address) }
    }

    private func publishScannerState(mode: BluetoothScannerMode) {
        var response = BluetoothScannerStateResponse()
        response.state = .running
        response.mode = mode
        response.configuredMode = .active
        publish(APIMessage(.bluetoothScannerStateResponse, response))
    }

    // MARK: The scanner

    private func scheduleTick() {
        loop.schedule(at: .now + Self.tick) { [self] in scan() }
    }

    /// One 100 ms tick: every device due to advertise is heard, and the batch goes out.
    private func scan() {
        guard state.value.subscriber != nil else {
            state.value.ticking = false
            return
        }
        state.value.ticks += 1
        let now = ContinuousClock.now
        // Out of range nothing is heard; the tick goes on for when the devices come back.
        let heard = state.value.inRange ? state.value.devices.keys.sorted() : []
        for address in heard {
            guard var device = state.value.devices[address], device.settings.advertising,
                  let due = device.nextSighting, due <= now else { continue }
            device.nextSighting = now + device.settings.advertisingInterval * Double.random(in: 0.9...1.1, using: &device.random)
            let sighting = device.sighting()
            state.value.devices[address] = device
            if let full = state.value.batcher.append(sighting) { publish(APIMessage(.bluetoothLERawAdvertisementsResponse, full)) }
        }
        if let batch = state.value.batcher.flush() { publish(APIMessage(.bluetoothLERawAdvertisementsResponse, batch)) }
        scheduleTick()
    }
}
