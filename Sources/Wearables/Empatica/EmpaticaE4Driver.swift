import BlueZ
import Logging
import Synchronization

/// The driver for the Empatica E4 wristband, on the reverse-engineered protocol of docs/protocols/e4.md.
///
/// On every connection it subscribes to the four sensor streams, the battery and the (modeled) tag button,
/// then writes the start command with the current Unix time — the E4 streams nothing before it. Sample times
/// are reconstructed from the nominal rates and the moment streaming started (`E4SampleClock`, re-anchored on
/// the EDA packet counter), because the packets carry no timestamps. Inter-beat intervals and heart rate are
/// computed on the gateway from BVP (`PulseBeatDetector`), as the EmpaLink SDK computes them on the phone:
/// they are approximate, and none are published during the detector's ~20 s warm-up.
public final class EmpaticaE4Driver: WearableDriver {

    /// The E4 advertises its name ("Empatica E4" and a serial suffix); the sensors service 0x3EA0 is not a
    /// SIG-assigned one, so either alone is a likely match and both together a certain one.
    public static func match(_ device: Advertisement) -> DriverMatch? {
        let named = (device.name ?? device.alias ?? "").hasPrefix("Empatica E4")
        let advertised = device.serviceUUIDs.contains { $0.lowercased() == E4UUID.Service.sensors }
        switch (named, advertised) {
        case (true, true): return .certain
        case (true, false), (false, true): return .likely
        case (false, false): return nil
        }
    }

    /// What one streaming connection needs: clocks per stream, the BVP integrator and the beat detector.
    struct Streams: Sendable {
        var clocks: [E4Stream: E4SampleClock]
        var bvp = E4BVPDeltaDecoder()
        var beats = PulseBeatDetector()

        init(startUnixMilliseconds: Int64) {
            clocks = Dictionary(uniqueKeysWithValues: E4Stream.allCases.map {
                ($0, E4SampleClock(startUnixMilliseconds: startUnixMilliseconds, stream: $0))
            })
        }

        /// Accelerometer packets of this connection that ended in a 1–2 byte tail after their last whole triplet.
        var accelerometerPacketsWithTail = 0

        mutating func timestamps(_ stream: E4Stream, counter: UInt16? = nil) -> [Int64] {
            clocks[stream]?.timestamps(ofPacketWithCounter: counter) ?? []
        }

        mutating func timestamps(_ stream: E4Stream, samples: Int) -> [Int64] {
            clocks[stream]?.timestamps(ofSamples: samples) ?? []
        }
    }

    private let streams = Mutex<Streams?>(nil)

    public init(configuration: DriverConfiguration) {}

    // MARK: Session

    public func session(_ link: DeviceLink) async throws {
        streams.withLock { $0 = nil }
        await readInformation(link)

        let handlers: [(String, @Sendable ([UInt8], DeviceLink) -> Void)] = [
            (E4UUID.Characteristic.bvp, bvp), (E4UUID.Characteristic.accelerometer, accelerometer),
            (E4UUID.Characteristic.eda, eda), (E4UUID.Characteristic.temperature, temperature),
            (E4UUID.Characteristic.battery, battery), (E4TagPress.uuidString, tag),
        ]
        var notifications: [NotificationHandler] = []
        for (uuid, handler) in handlers {
            guard let characteristic = link.characteristic(uuid), characteristic.canNotify else {
                if uuid != E4TagPress.uuidString && uuid != E4UUID.Characteristic.battery {
                    throw CommandError(.notSupported, "the E4 lacks the notifying characteristic \(uuid)")
                }
                continue
            }
            notifications.append(NotificationHandler(characteristic) { handler($0, link) })
        }
        try await link.runSession(notifications) { [self] in try await start(link) }
    }

    /// The start command with the current Unix time; the clocks start when the E4 has taken it.
    private func start(_ link: DeviceLink) async throws {
        guard let command = link.characteristic(E4UUID.Characteristic.command) else {
            throw CommandError(.notSupported, "the E4 lacks its command characteristic 0x3E71")
        }
        let bytes = try E4StartCommand(unixMilliseconds: link.now).encode()
        try await link.write(command, bytes, withResponse: command.flags.contains("write"))
        streams.withLock { $0 = Streams(startUnixMilliseconds: link.now) }
    }

    private func readInformation(_ link: DeviceLink) async {
        var state = await link.readDeviceInformationStrings()
        if let characteristic = link.characteristic(E4UUID.Characteristic.battery), characteristic.flags.contains("read"),
           let bytes = try? await link.read(characteristic), let level = try? E4BatteryLevel.decode(bytes) {
            state["battery"] = .integer(Int64(level.percent))
        }
        if !state.isEmpty { link.emit(.state(state)) }
    }

    // MARK: Notifications → samples

    private func decodeFailed(_ what: String, _ bytes: [UInt8], _ error: GATTCodecError, _ link: DeviceLink) {
        link.logger.debug("malformed \(what) packet dropped", metadata: ["bytes": "\(bytes)", "error": "\(error)"])
    }

    @Sendable private func bvp(_ bytes: [UInt8], _ link: DeviceLink) {
        do {
            let packet = try E4BVPPacket.decode(bytes)
            let (values, times, beats) = streams.withLock { state -> ([Double], [Int64], [BeatEvent]) in
                guard state != nil else { return ([], [], []) }
                let values = state!.bvp.decode(packet)
                let times = state!.timestamps(.bvp)
                var beats: [BeatEvent] = []
                for (value, time) in zip(values, times) { beats += state!.beats.process(sample: value, timestamp: time) }
                return (values, times, beats)
            }
            for (value, time) in zip(values, times) {
                link.emit(.sample(SensorSample(sensor: .bvp, timestamp: time, reading: .bvp(value: value))))
            }
            for beat in beats {
                link.emit(.sample(SensorSample(sensor: .ibi, timestamp: beat.timestamp, reading: .ibi(seconds: beat.interval))))
                link.emit(.sample(SensorSample(
                    sensor: .heartRate, timestamp: beat.timestamp,
                    reading: .heartRate(bpm: Int(beat.heartRate.rounded()), contact: nil, energyExpendedKJ: nil,
                                        rrIntervalsMilliseconds: [beat.interval * 1000]))))
            }
        } catch { decodeFailed("BVP", bytes, error, link) }
    }

    @Sendable private func accelerometer(_ bytes: [UInt8], _ link: DeviceLink) {
        do {
            let packet = try E4AccelerometerPacket.decode(bytes)
            let hasTail = !packet.trailingBytes.isEmpty
            let (times, packetsWithTail) = streams.withLock { state -> ([Int64], Int) in
                guard state != nil else { return ([], 0) }
                if hasTail { state!.accelerometerPacketsWithTail += 1 }
                return (state!.timestamps(.accelerometer, samples: packet.samples.count), state!.accelerometerPacketsWithTail)
            }
            if hasTail { tailIgnored(packet, bytes, count: packetsWithTail, link) }
            for (sample, time) in zip(packet.samples, times) {
                let g = sample.gravities
                link.emit(.sample(SensorSample(sensor: .accelerometer, timestamp: time,
                                               reading: .vector(x: g.x, y: g.y, z: g.z, accuracy: nil))))
            }
        } catch { decodeFailed("accelerometer", bytes, error, link) }
    }

    /// A packet whose last 1–2 bytes make no whole triplet: its samples are published, the tail is counted and
    /// logged at debug level like a malformed packet — on the 1st, 2nd, 4th, 8th… of a connection, because a band
    /// that always sends 20 bytes would otherwise log five lines a second.
    private func tailIgnored(_ packet: E4AccelerometerPacket, _ bytes: [UInt8], count: Int, _ link: DeviceLink) {
        guard count > 0, count & (count - 1) == 0 else { return }
        link.logger.debug("accelerometer packet tail ignored after its whole x, y, z triplets", metadata: [
            "bytes": "\(bytes)", "samples": "\(packet.samples.count)", "tail": "\(packet.trailingBytes)",
            "packets_with_tail": "\(count)",
        ])
    }

    /// Accelerometer packets of the current connection that ended in a 1–2 byte tail (0 before streaming).
    var accelerometerPacketsWithTail: Int { streams.withLock { $0?.accelerometerPacketsWithTail ?? 0 } }

    @Sendable private func eda(_ bytes: [UInt8], _ link: DeviceLink) {
        do {
            let packet = try E4EDAPacket.decode(bytes)
            let times = streams.withLock { $0 == nil ? [] : $0!.timestamps(.eda, counter: packet.counter) }
            for (value, time) in zip(packet.microsiemens, times) {
                // Raw 0 (no skin contact, an open circuit) has no conductance to report.
                guard let value else { continue }
                link.emit(.sample(SensorSample(sensor: .eda, timestamp: time, reading: .eda(microsiemens: value))))
            }
        } catch { decodeFailed("EDA", bytes, error, link) }
    }

    @Sendable private func temperature(_ bytes: [UInt8], _ link: DeviceLink) {
        do {
            let packet = try E4TemperaturePacket.decode(bytes)
            let times = streams.withLock { $0 == nil ? [] : $0!.timestamps(.temperature) }
            for (value, time) in zip(packet.celsius, times) {
                link.emit(.sample(SensorSample(sensor: .skinTemperature, timestamp: time, reading: .celsius(value))))
            }
        } catch { decodeFailed("temperature", bytes, error, link) }
    }

    @Sendable private func battery(_ bytes: [UInt8], _ link: DeviceLink) {
        do {
            link.emit(.state(["battery": .integer(Int64(try E4BatteryLevel.decode(bytes).percent))]))
        } catch { decodeFailed("battery", bytes, error, link) }
    }

    /// The tag button (modeled characteristic, see docs/protocols/e4.md): an event with the press time.
    @Sendable private func tag(_ bytes: [UInt8], _ link: DeviceLink) {
        do {
            let press = try E4TagPress.decode(bytes)
            link.emit(.event(name: "tag", timestamp: press.unixMilliseconds, details: [:]))
        } catch { decodeFailed("tag", bytes, error, link) }
    }

    // MARK: Commands

    public func execute(_ command: DeviceCommand, link: DeviceLink) async throws(CommandError) -> DeviceValue {
        switch command {
        case .refresh:
            await readInformation(link)
            return .object([:])
        default:
            throw CommandError(.notSupported, "\(command.name) is not supported by the Empatica E4")
        }
    }
}
