/// Speed and cadence derived from two successive CSC measurements.
public struct CyclingSpeedCadence: Sendable, Equatable {
    /// Wheel speed, m/s; nil when there is no new wheel revolution to measure from.
    public var speedMetresPerSecond: Double?
    /// Crank cadence, revolutions per minute; nil when there is no new crank revolution to measure from.
    public var cadenceRPM: Double?

    public init(speedMetresPerSecond: Double? = nil, cadenceRPM: Double? = nil) {
        self.speedMetresPerSecond = speedMetresPerSecond
        self.cadenceRPM = cadenceRPM
    }
}

/// Turns the cumulative counts of successive CSC measurements into wheel speed and crank cadence, as the
/// Cycling Speed and Cadence Profile describes: revolutions between two measurements over the time between
/// their last-event times.
///
/// Differences are taken modulo the field widths (event times u16, wheel revolutions u32, crank revolutions
/// u16), so a rollover between two measurements gives the right answer. Two measurements more than 64 s apart
/// are ambiguous — the event time may have wrapped more than once — and the calculator cannot tell.
///
/// A pair whose event time did not change gives nil: no revolution completed, so there is nothing to divide by.
/// It does not give 0, because deciding the rider has stopped needs a clock (no new revolution for a while),
/// which belongs to the driver, not to this pure state machine.
public struct CyclingSpeedCadenceCalculator: Sendable {
    /// The wheel's circumference; 2.105 m is a 700×25C road tyre, the usual default of cycling computers.
    public let wheelCircumferenceMetres: Double

    private var previousWheel: CyclingSpeedCadenceMeasurement.WheelRevolutions?
    private var previousCrank: CyclingSpeedCadenceMeasurement.CrankRevolutions?

    public init(wheelCircumferenceMetres: Double = 2.105) {
        self.wheelCircumferenceMetres = wheelCircumferenceMetres
    }

    /// Feeds the next measurement; the first one of each kind only sets the starting point.
    public mutating func update(with measurement: CyclingSpeedCadenceMeasurement) -> CyclingSpeedCadence {
        CyclingSpeedCadence(
            speedMetresPerSecond: measurement.wheel.flatMap { updateWheel($0) },
            cadenceRPM: measurement.crank.flatMap { updateCrank($0) }
        )
    }

    /// Forgets the previous measurements, for when the sensor reconnects and its counters may have restarted.
    public mutating func reset() {
        previousWheel = nil
        previousCrank = nil
    }

    private mutating func updateWheel(_ wheel: CyclingSpeedCadenceMeasurement.WheelRevolutions) -> Double? {
        guard let previous = previousWheel else {
            previousWheel = wheel
            return nil
        }
        let ticks = wheel.lastEventTime &- previous.lastEventTime
        guard ticks != 0 else { return nil }
        previousWheel = wheel
        let revolutions = wheel.cumulativeRevolutions &- previous.cumulativeRevolutions
        return Double(revolutions) * wheelCircumferenceMetres / Self.seconds(ticks)
    }

    private mutating func updateCrank(_ crank: CyclingSpeedCadenceMeasurement.CrankRevolutions) -> Double? {
        guard let previous = previousCrank else {
            previousCrank = crank
            return nil
        }
        let ticks = crank.lastEventTime &- previous.lastEventTime
        guard ticks != 0 else { return nil }
        previousCrank = crank
        let revolutions = crank.cumulativeRevolutions &- previous.cumulativeRevolutions
        return Double(revolutions) * 60 / Self.seconds(ticks)
    }

    private static func seconds(_ ticks: UInt16) -> Double { Double(ticks) / 1024 }
}
