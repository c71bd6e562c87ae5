import EventLoop
import Foundation
import Wearables

/// The Current Time characteristic (0x2A2B, Current Time Service 1.1) of a simulated device whose clock a host
/// sets: a read answers the time last written, advanced by the time since, so a host that checks the clock after
/// setting it sees it run; before any write, the simulation's clock (`time`) in `timeZone`. Shared by the simulated devices
/// that carry a settable clock (the Care-Xc, the ActiGraph Link).
///
/// A write of another length than 10 bytes is ATT 0x0D; 10 bytes that do not decode are CTS's 0x80 "Data field
/// ignored". Does not notify (no simulated device changes its own clock) and does not feed the written time back
/// into what the device stamps its data with: hosts set it from the same clock the simulation runs on.
struct SimulatedCurrentTime: Sendable {
    static let uuid = BluetoothUUID(GATTUUID.Characteristic.currentTime)
    /// Current Time Service's "Data field ignored".
    static let dataFieldIgnored = ATTError.application(0x80)

    /// Readable and writable, as a host that sets the clock on every connection needs.
    static let characteristic = SimulatedCharacteristic(uuid, flags: [.read, .write])

    /// Where the device's clock reads before a host set it.
    let timeZone: TimeZone
    private let time: TimeSource
    private var written: (value: CurrentTime, at: ContinuousClock.Instant)?

    init(timeZone: TimeZone, time: TimeSource) {
        self.timeZone = timeZone
        self.time = time
    }

    /// The characteristic's value now; ATT 0x0E ("unlikely error") only for a clock outside the years Current Time
    /// can carry.
    func read() throws(ATTError) -> [UInt8] {
        guard let time = currentTime() else { throw .unlikelyError }
        return time.encode()
    }

    mutating func write(_ value: [UInt8]) throws(ATTError) {
        guard value.count == 10 else { throw .invalidAttributeValueLength }
        guard let time = try? CurrentTime.decode(value) else { throw Self.dataFieldIgnored }
        written = (time, self.time.now)
    }

    private func currentTime() -> CurrentTime? {
        guard let written else {
            let now = Date(timeIntervalSince1970: Double(time.unixMilliseconds) / 1000)
            return try? CurrentTime(date: now, timeZone: timeZone)
        }
        let elapsed = time.now - written.at
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Self.advanced(written.value, by: seconds) ?? written.value
    }

    /// `time` plus `seconds`, keeping its adjust reason; nil when its date is not a full calendar date.
    static func advanced(_ time: CurrentTime, by seconds: Double) -> CurrentTime? {
        guard let utc = TimeZone(secondsFromGMT: 0) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = utc
        let fields = time.dateTime
        guard fields.year != 0, fields.month != 0, fields.day != 0,
              let date = calendar.date(from: DateComponents(year: fields.year, month: fields.month, day: fields.day,
                                                            hour: fields.hours, minute: fields.minutes,
                                                            second: fields.seconds)) else { return nil }
        let moved = date.addingTimeInterval(Double(time.fractions256) / 256 + seconds)
        return try? CurrentTime(date: moved, timeZone: utc, adjustReason: time.adjustReason)
    }
}
