import Wearables
import SimulatedWearables

/// A heart-rate sensor made for measuring: Heart Rate Service 0x180D like `SimulatedHeartRateStrap`, so the
/// gateway's `standard` driver serves it, but every Heart Rate Measurement carries a sequence number in its
/// Energy Expended field (the gateway publishes it as `energy_kj`; the raw relay forwards the bytes). The send
/// instant of each number goes into the `SendLedger` just before the notification is handed to the link.
///
/// It has no battery and no Device Information, so the driver's connection-time reads are few and the only
/// traffic is the measurement stream. Ticks follow a fixed schedule (like the strap's): a late tick does not
/// make the next one early by more than one interval, so an overloaded simulator sends less rather than in bursts,
/// and the report shows the rate actually sent.
///
/// Above 500 Hz (the load generator of the targets profile's ceiling run) a tick every 2 ms or so sends the
/// notifications due by then as one burst (`PeripheralLink.notify(_:values:)`), so one actor hop carries several
/// samples and the simulator is not what limits the gateway; every notification's send instant is still recorded.
/// What is due follows the time since the first burst, so a late tick catches up (by at most four ticks' worth).
///
/// At rate 0 it is connected but silent: one measurement as soon as someone subscribes (so the bench sees it
/// delivering), then nothing, for the idle figure of `--profile realistic`.
actor SequencedHeartRateSensor: SimulatedPeripheral {
    nonisolated let advertisement: SimulatedAdvertisement
    nonisolated let services: [SimulatedService]
    nonisolated let deviceName: String

    static let measurementUUID = BluetoothUUID(GATTUUID.Characteristic.heartRateMeasurement)
    static let locationUUID = BluetoothUUID(GATTUUID.Characteristic.bodySensorLocation)

    private let index: Int
    /// Time between ticks; nil at rate 0: one measurement once subscribed, then silence.
    private let interval: Duration?
    /// Notifications per tick: 1 up to 500 Hz, then as many as make a tick of about 2 ms.
    private let perTick: Int
    /// A tick shorter than this costs the simulator more in wake-ups than the sending itself.
    static let shortestTick = 0.002
    private let rateHz: Double
    private let ledger: SendLedger
    private var counter: UInt64 = 0
    /// Burst mode: when the first burst went out, and the counter then.
    private var bursts: (start: ContinuousClock.Instant, counter: UInt64)?

    init(index: Int, name: String, rateHz: Double, ledger: SendLedger) {
        self.index = index
        self.ledger = ledger
        self.rateHz = rateHz
        perTick = rateHz > 0 ? max(1, Int((rateHz * Self.shortestTick).rounded(.down))) : 1
        interval = rateHz > 0 ? .nanoseconds(Int64((1_000_000_000 * Double(perTick) / rateHz).rounded())) : nil
        deviceName = name
        advertisement = SimulatedAdvertisement(localName: name, serviceUUIDs: [BluetoothUUID(GATTUUID.Service.heartRate)],
                                               appearance: 0x0341, rssi: -55)
        services = [
            SimulatedService(BluetoothUUID(GATTUUID.Service.heartRate), characteristics: [
                SimulatedCharacteristic(Self.measurementUUID, flags: .notify),
                SimulatedCharacteristic(Self.locationUUID, flags: .read, initialValue: BodySensorLocation.chest.encode()),
            ]),
        ]
    }

    /// The measurement that carries `counter`: 72 bpm, contact, energy = the low 16 bits of the counter.
    static func measurement(_ counter: UInt64) -> [UInt8] {
        // Within range by construction: 72 bpm and a 16-bit energy value.
        (try? HeartRateMeasurement(bpm: 72, contact: true, energyExpendedKJ: Int(counter & 0xFFFF)))?.encode() ?? []
    }

    func run(on link: any PeripheralLink) async {
        guard let interval else {
            // Silent: try every 100 ms until the one measurement went out, then wait to be cancelled.
            while counter == 0 {
                do { try await Task.sleep(for: .milliseconds(100)) } catch { return }
                await send(on: link)
            }
            while !Task.isCancelled {
                do { try await Task.sleep(for: .seconds(3600)) } catch { return }
            }
            return
        }
        let clock = ContinuousClock()
        var next = clock.now + interval
        while !Task.isCancelled {
            do { try await clock.sleep(until: next) } catch { return }
            next += interval
            let now = clock.now
            if next < now { next = now }
            if perTick == 1 {
                await send(on: link)
            } else {
                await sendBurst(on: link)
            }
        }
    }

    /// The measurements due since the first burst at `rateHz` (at most four ticks' worth), recorded with one send
    /// instant; those that did not go out are taken back and are due again.
    private func sendBurst(on link: any PeripheralLink) async {
        let now = ContinuousClock.now
        let origin = bursts ?? (now, counter)
        bursts = origin
        let elapsed = (now - origin.start) / .seconds(1)
        let target = origin.counter + UInt64(elapsed * rateHz) + UInt64(perTick)
        let count = Int(min(target > counter ? target - counter : 0, UInt64(4 * perTick)))
        guard count > 0 else { return }
        let first = counter + 1
        let instant = monotonicNanoseconds()
        var values: [[UInt8]] = []
        values.reserveCapacity(count)
        for offset in 0..<UInt64(count) {
            ledger.record(device: index, counter: first + offset, at: instant)
            values.append(Self.measurement(first + offset))
        }
        let sent = await link.notify(Self.measurementUUID, values: values)
        for offset in (UInt64(sent)..<UInt64(count)).reversed() {
            ledger.retract(device: index, counter: first + offset)
        }
        counter += UInt64(sent)
    }

    /// The next measurement, recorded in the ledger just before it goes out and taken back if nobody listened.
    private func send(on link: any PeripheralLink) async {
        let candidate = counter + 1
        ledger.record(device: index, counter: candidate, at: monotonicNanoseconds())
        if await link.notify(Self.measurementUUID, value: Self.measurement(candidate)) {
            counter = candidate
        } else {
            ledger.retract(device: index, counter: candidate)
        }
    }

    func read(_ characteristic: BluetoothUUID) async throws(ATTError) -> [UInt8] {
        guard characteristic == Self.locationUUID else { throw .readNotPermitted }
        return BodySensorLocation.chest.encode()
    }

    func write(_ characteristic: BluetoothUUID, value: [UInt8], kind: WriteKind) async throws(ATTError) {
        throw .writeNotPermitted
    }

    func handle(_ event: DeviceEvent, link: (any PeripheralLink)?) async -> Bool { false }
}

/// A simulated device of the catalog (here the Bose Frames) whose Bose `SensorData` records are counted as they
/// are sent, so the report can set "records sent" against "samples received". Everything else is passed through.
final class RecordCountingPeripheral: SimulatedPeripheral {
    let inner: any SimulatedPeripheral
    let counter: RecordCounter

    static let sensorDataUUID = BluetoothUUID(string: BoseUUID.sensorData)!

    init(_ inner: any SimulatedPeripheral, counter: RecordCounter) {
        self.inner = inner
        self.counter = counter
    }

    var advertisement: SimulatedAdvertisement { inner.advertisement }
    var services: [SimulatedService] { inner.services }
    var deviceName: String { inner.deviceName }

    func run(on link: any PeripheralLink) async {
        await inner.run(on: CountingLink(inner: link, counter: counter))
    }

    func read(_ characteristic: BluetoothUUID) async throws(ATTError) -> [UInt8] {
        try await inner.read(characteristic)
    }

    func write(_ characteristic: BluetoothUUID, value: [UInt8], kind: WriteKind) async throws(ATTError) {
        try await inner.write(characteristic, value: value, kind: kind)
    }

    func subscriptionChanged(_ characteristic: BluetoothUUID, isSubscribed: Bool) async {
        await inner.subscriptionChanged(characteristic, isSubscribed: isSubscribed)
    }

    func handle(_ event: DeviceEvent, link: (any PeripheralLink)?) async -> Bool {
        await inner.handle(event, link: link.map { CountingLink(inner: $0, counter: counter) })
    }

    /// Records in one `SensorData` notification: `[id u8][timestamp u16][sample]` each, the sample as long as
    /// the sensor's layout (the simulated Frames announce exactly those lengths).
    static func records(in value: [UInt8]) -> Int {
        var offset = 0
        var count = 0
        while offset < value.count, let sensor = BoseSensor(rawValue: value[offset]) {
            offset += 3 + sensor.payloadLength
            count += 1
        }
        return count
    }

    private struct CountingLink: PeripheralLink {
        let inner: any PeripheralLink
        let counter: RecordCounter

        var mtu: Int { inner.mtu }

        func isSubscribed(_ characteristic: BluetoothUUID) async -> Bool { await inner.isSubscribed(characteristic) }

        func notify(_ characteristic: BluetoothUUID, value: [UInt8]) async -> Bool {
            let sent = await inner.notify(characteristic, value: value)
            if sent, characteristic == RecordCountingPeripheral.sensorDataUUID {
                counter.add(RecordCountingPeripheral.records(in: value))
            }
            return sent
        }

        func indicate(_ characteristic: BluetoothUUID, value: [UInt8]) async -> Bool {
            await inner.indicate(characteristic, value: value)
        }

        func disconnect() async { await inner.disconnect() }
    }
}
