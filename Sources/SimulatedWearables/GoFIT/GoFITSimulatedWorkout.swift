import Foundation
import Wearables

/// The sports the simulated band records with GPS, with the activity type id it stores (*chosen*: the SDK's
/// `typeID` is a number without a published list).
public enum GoFITSimulatedSport: UInt8, Sendable, CaseIterable {
    case run = 1
    case ride = 2

    /// The pace the wearer settles into, m/s (10.4 km/h running, 22 km/h cycling).
    var cruisingSpeed: Double {
        switch self {
        case .run: 2.9
        case .ride: 6.1
        }
    }

    /// The heart rate the wearer settles into after warming up.
    var workingHeartRate: Double {
        switch self {
        case .run: 158
        case .ride: 138
        }
    }

    /// Steps per minute running, pedal revolutions per minute cycling (the GPS point's `cadence`).
    var cadence: Double {
        switch self {
        case .run: 166
        case .ride: 86
        }
    }

    /// kcal per metre for a 65 kg wearer: about 1 kcal/kg/km running, a third of that cycling.
    var caloriesPerMeter: Double {
        switch self {
        case .run: 0.065
        case .ride: 0.022
        }
    }
}

/// One GPS workout as the band records it (docs/protocols/gofit.md, "History records", kind 5): a fix every 5 s
/// along a smooth loop near `origin`, with elevation, speed, accumulated distance, duration and steps, heart
/// rate and cadence, and a lap every kilometre (the last lap is whatever is left). Pure and seeded.
///
/// Laps end exactly at each kilometre, as a watch's auto-lap does: the moment and the step count there are
/// interpolated between the two fixes around it (a ride covers some 30 m between fixes).
///
/// The loop's circumference is the planned distance, so the track ends near where it started; the heading
/// wanders a little around it. Heart rate climbs from about 95 bpm to the sport's working rate over the first
/// minutes. A ride counts no steps, its bike speed is the speed and its cadence pedal revolutions.
///
/// Not modeled: pauses, GPS dropouts (every fix is valid, flag 0), the SDK's IEI lap markers ≥ 0xF5.
public enum GoFITSimulatedWorkout {
    public static let pointIntervalSeconds = 5
    public static let lapMeters = 1000.0
    /// The park the wearer trains in (Daan Forest Park, Taipei: the time zone of seed 001's samples is UTC+8).
    public static let origin = (latitude: 25.0298, longitude: 121.5358)

    static let nmeaVersion: UInt8 = 3
    static let metersPerDegreeLatitude = 111_320.0

    /// A workout of `sport` starting at `start` (Unix seconds) and lasting `durationSeconds` (at most 2.5 h, the
    /// 1,800 points a record holds).
    public static func activity(_ sport: GoFITSimulatedSport, start: UInt32, durationSeconds: Int,
                                timeZoneOffsetMinutes: Int16, random: inout SimulationRandom) -> GoFITActivity {
        let intervals = min(max(1, durationSeconds / pointIntervalSeconds), GoFITActivity.maximumPoints - 1)
        let plannedDistance = sport.cruisingSpeed * Double(intervals * pointIntervalSeconds)
        var speed = SlowlyVaryingValue(start: sport.cruisingSpeed * 0.7, target: sport.cruisingSpeed,
                                       step: sport.cruisingSpeed * 0.03, pull: 0.08,
                                       limits: (sport.cruisingSpeed * 0.5)...(sport.cruisingSpeed * 1.4))
        var heartRate = SlowlyVaryingValue(start: 95, target: sport.workingHeartRate, step: 1.2, pull: 0.025,
                                           limits: 85...188)
        var cadence = SlowlyVaryingValue(start: sport.cadence, step: 1.5, pull: 0.1,
                                         limits: (sport.cadence - 15)...(sport.cadence + 15))
        var wiggle = SlowlyVaryingValue(start: 0, step: 0.04, pull: 0.08, limits: -0.5...0.5)
        let baseHeading = Double.random(in: 0..<(2 * Double.pi), using: &random)
        let hillPhase = Double.random(in: 0..<(2 * Double.pi), using: &random)
        let (hillHeight, hillLength): (Double, Double) = sport == .run ? (6, 1300) : (22, 4200)

        var north = 0.0
        var east = 0.0
        var distance = 0.0
        var steps = 0.0
        var points: [GoFITGPSPoint] = []
        var laps: [GoFITLap] = []
        var lap = LapInProgress(number: 1, start: Double(start), distance: 0, steps: 0)
        var previous = (time: Double(start), distance: 0.0, steps: 0.0)
        points.reserveCapacity(intervals + 1)

        for index in 0...intervals {
            let elapsed = index * pointIntervalSeconds
            let metersPerSecond = index == 0 ? 0 : speed.advance(using: &random)
            let beat = heartRate.advance(using: &random)
            let rate = cadence.advance(using: &random)
            if index > 0 {
                let step = metersPerSecond * Double(pointIntervalSeconds)
                let heading = baseHeading + 2 * Double.pi * distance / plannedDistance + wiggle.advance(using: &random)
                north += step * cos(heading)
                east += step * sin(heading)
                distance += step
                if sport == .run { steps += rate * Double(pointIntervalSeconds) / 60 }
            }
            let timestamp = start + UInt32(elapsed)
            let latitude = origin.latitude + north / metersPerDegreeLatitude
            let longitude = origin.longitude + east / (metersPerDegreeLatitude * cos(origin.latitude * Double.pi / 180))
            let elevation = 12 + hillHeight * sin(2 * Double.pi * distance / hillLength + hillPhase)
            let speedCentimeters = UInt16(clamping: Int((metersPerSecond * 100).rounded()))
            points.append(GoFITGPSPoint(
                timestamp: timestamp, valid: true, flag: 0,
                latitudeE7: Int32((latitude * 1e7).rounded()), longitudeE7: Int32((longitude * 1e7).rounded()),
                elevationDecimeters: Int16((elevation * 10).rounded()), speedCentimetersPerSecond: speedCentimeters,
                accumulatedDistanceMeters: UInt32(distance.rounded(.down)), accumulatedDurationSeconds: UInt32(elapsed),
                heartRate: UInt8(beat.rounded()), accumulatedSteps: UInt32(steps.rounded(.down)),
                lap: UInt8(clamping: lap.number), bikeSpeedCentimetersPerSecond: sport == .ride ? speedCentimeters : 0,
                cadence: index == 0 ? 0 : UInt8(rate.rounded())))
            if index > 0 { lap.add(heartRate: beat, cadence: sport == .run ? rate : 0) }
            let boundary = Double(lap.number) * lapMeters
            if distance >= boundary && laps.count < GoFITActivity.maximumLaps - 1 {
                let fraction = (boundary - previous.distance) / max(distance - previous.distance, 0.001)
                let time = previous.time + fraction * Double(pointIntervalSeconds)
                let stepsThere = previous.steps + fraction * (steps - previous.steps)
                laps.append(lap.finished(at: time, distance: boundary, steps: stepsThere, sport: sport))
                lap = LapInProgress(number: lap.number + 1, start: time, distance: boundary, steps: stepsThere)
            }
            if index == intervals && (distance - lap.distance >= 1 || laps.isEmpty) {
                laps.append(lap.finished(at: Double(timestamp), distance: distance, steps: steps, sport: sport))
            }
            previous = (Double(timestamp), distance, steps)
        }

        let beats = points.dropFirst().map { Double($0.heartRate) }
        return GoFITActivity(
            start: start, timeZoneOffsetMinutes: timeZoneOffsetMinutes, typeID: sport.rawValue, nmeaVersion: nmeaVersion,
            durationSeconds: UInt32(intervals * pointIntervalSeconds), distanceMeters: UInt32(distance.rounded(.down)),
            caloriesKcal: UInt16(clamping: laps.reduce(0) { $0 + Int($1.caloriesKcal) }),
            steps: UInt32(steps.rounded(.down)),
            averageHeartRate: UInt8((beats.reduce(0, +) / Double(max(1, beats.count))).rounded()),
            maximumHeartRate: UInt8(beats.max() ?? 0), points: points, laps: laps)
    }

    /// Sums of the lap being run.
    private struct LapInProgress {
        let number: Int
        /// Unix seconds, interpolated between fixes.
        let start: Double
        let distance: Double
        let steps: Double
        var heartRateSum = 0.0
        var samples = 0
        var maximumCadence = 0.0

        init(number: Int, start: Double, distance: Double, steps: Double) {
            self.number = number
            self.start = start
            self.distance = distance
            self.steps = steps
        }

        mutating func add(heartRate: Double, cadence: Double) {
            heartRateSum += heartRate
            samples += 1
            maximumCadence = max(maximumCadence, cadence)
        }

        /// Rounded so that consecutive laps' starts, durations and steps add up.
        func finished(at end: Double, distance total: Double, steps totalSteps: Double, sport: GoFITSimulatedSport) -> GoFITLap {
            let begin = UInt32(start.rounded())
            let duration = max(1, UInt32(end.rounded()) - begin)
            let meters = max(0, total.rounded(.down) - distance.rounded(.down))
            let lapSteps = max(0, totalSteps.rounded(.down) - steps.rounded(.down))
            return GoFITLap(
                start: begin, durationSeconds: duration, distanceMeters: UInt32(meters),
                averageSpeedCentimetersPerSecond: UInt16(clamping: Int((meters / Double(duration) * 100).rounded())),
                averageHeartRate: UInt8((heartRateSum / Double(max(1, samples))).rounded()),
                caloriesKcal: UInt16(clamping: Int((meters * sport.caloriesPerMeter).rounded())),
                steps: UInt32(lapSteps),
                averageCadence: UInt8(clamping: Int((lapSteps / (Double(duration) / 60)).rounded())),
                maximumCadence: UInt8(clamping: Int(maximumCadence.rounded())))
        }
    }
}
