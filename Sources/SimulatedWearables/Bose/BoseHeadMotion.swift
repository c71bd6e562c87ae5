import Foundation
import Wearables

/// The head of someone wearing Bose Frames, as the glasses' motion sensors see it: what the accelerometer,
/// gyroscope, magnetometer and the sensor hub's fused outputs (rotation, game rotation, orientation) would
/// report at a given time. Pure and seeded: the same seed and the same sample times give the same readings.
///
/// Axes are Bose's (the SDK's "Sensors and Coordinate System"): x towards the wearer's right, y towards the back,
/// z down towards the body. Positive pitch looks up, positive roll tilts towards the left shoulder, positive yaw
/// turns right; the head's rotation is yaw about z, then pitch about x, then roll about y. The accelerometer
/// measures specific force, so a still, upright head reads (0, 0, −9.81) m/s², the SDK's (0, 0, −1) g.
///
/// What moves: a small sway in pitch, roll and yaw (slow sinusoids of a degree or two); every 4–12 s a slow
/// head turn (at least 0.8 s, at most about 45°/s on average) to a new heading within ±60° of the starting one;
/// and, when asked, a nod (two dips of 15° in 1 s), a shake (two swings of ±25° in 1.2 s) or a double tap (two
/// 1.5 g knocks along x, 250 ms apart).
/// What it does not model: walking or any other linear acceleration besides taps, magnetic disturbances, sensor
/// saturation (the codec clamps).
struct BoseHeadMotion: Sendable {
    struct Vector: Sendable, Equatable {
        var x: Double
        var y: Double
        var z: Double

        var magnitude: Double { (x * x + y * y + z * z).squareRoot() }
        static func + (lhs: Vector, rhs: Vector) -> Vector { Vector(x: lhs.x + rhs.x, y: lhs.y + rhs.y, z: lhs.z + rhs.z) }
    }

    /// A unit quaternion, vector part first as on the wire.
    struct Quaternion: Sendable, Equatable {
        var x: Double
        var y: Double
        var z: Double
        var w: Double

        static let identity = Quaternion(x: 0, y: 0, z: 0, w: 1)

        /// A rotation by `angle` radians about the unit `axis`.
        init(axis: Vector, angle: Double) {
            let half = angle / 2
            x = axis.x * sin(half)
            y = axis.y * sin(half)
            z = axis.z * sin(half)
            w = cos(half)
        }

        init(x: Double, y: Double, z: Double, w: Double) {
            self.x = x
            self.y = y
            self.z = z
            self.w = w
        }

        var norm: Double { (x * x + y * y + z * z + w * w).squareRoot() }
        var conjugate: Quaternion { Quaternion(x: -x, y: -y, z: -z, w: w) }

        /// Unit length with w ≥ 0, the form a sensor hub reports (q and −q are the same rotation).
        var canonical: Quaternion {
            let scale = (w < 0 ? -1 : 1) / norm
            return Quaternion(x: x * scale, y: y * scale, z: z * scale, w: w * scale)
        }

        static func * (a: Quaternion, b: Quaternion) -> Quaternion {
            Quaternion(
                x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
                w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z)
        }

        /// `vector` rotated by this quaternion (head frame → world frame).
        func rotate(_ vector: Vector) -> Vector {
            let rotated = self * Quaternion(x: vector.x, y: vector.y, z: vector.z, w: 0) * conjugate
            return Vector(x: rotated.x, y: rotated.y, z: rotated.z)
        }
    }

    /// Everything the seven sensors report at one instant, in the units the simulated device announces.
    struct Reading: Sendable, Equatable {
        /// m/s², specific force in the head frame.
        var acceleration: Vector
        /// °/s, about the head's axes.
        var angularVelocity: Vector
        /// Head → a frame facing magnetic north (x east, y south, z down).
        var rotation: Quaternion
        /// Radians, the fusion's estimated heading accuracy.
        var rotationAccuracy: Double
        /// Head → the frame the head faced at time zero, drifting slowly in yaw as a gyroscope-only fusion does.
        var gameRotation: Quaternion
        /// Degrees: x pitch, y roll, z heading from magnetic north (−180…180, positive east).
        var orientation: Vector
        /// µT, calibrated.
        var magneticField: Vector
        /// µT, the hard-iron offset the uncalibrated magnetometer includes and reports.
        var magnetometerBias: Vector
    }

    enum Gesture: Sendable, Equatable {
        case nod
        case shake
        case doubleTap
    }

    private enum Movement: Sendable {
        case turn(byDegrees: Double)
        case nod
        case shake
        case tap
    }

    private struct Scheduled: Sendable {
        var start: Double
        var duration: Double
        var movement: Movement
        var end: Double { start + duration }
    }

    static let gravity = 9.80665
    static let nodDuration = 1.0
    static let shakeDuration = 1.2
    static let tapGap = 0.25
    /// Central Europe: 19 µT horizontal (towards north), 45 µT vertical (down).
    static let earthField = Vector(x: 0, y: -19, z: 45)

    private var random: SimulationRandom
    private let startHeading: Double
    private let sway: [(amplitude: Double, hertz: Double, phase: Double)]
    private let gyroscopeBias: Vector
    private let magnetometerBias: Vector
    private var accuracy: SlowlyVaryingValue
    private var baseYaw = 0.0
    private var plannedYaw = 0.0
    private var nextTurn: Double
    private var movements: [Scheduled] = []

    init(seed: UInt64) {
        var seeds = SimulationRandom(seed: seed)
        var setup = seeds.split()
        random = seeds.split()
        startHeading = Double.random(in: -180..<180, using: &setup)
        // Pitch, roll, yaw: two slow sinusoids each.
        sway = (0..<6).map { index in
            (amplitude: index < 2 ? 1.5 : index < 4 ? 1.0 : 0.8,
             hertz: Double.random(in: 0.05...0.3, using: &setup),
             phase: Double.random(in: 0..<(2 * .pi), using: &setup))
        }
        gyroscopeBias = Vector(x: Double.random(in: -0.3...0.3, using: &setup), y: Double.random(in: -0.3...0.3, using: &setup),
                               z: Double.random(in: -0.3...0.3, using: &setup))
        magnetometerBias = Vector(x: Double.random(in: -30...30, using: &setup), y: Double.random(in: -30...30, using: &setup),
                                  z: Double.random(in: -30...30, using: &setup))
        accuracy = SlowlyVaryingValue(start: 0.12, step: 0.004, pull: 0.02, limits: 0.05...0.35)
        nextTurn = Double.random(in: 2...6, using: &setup)
    }

    /// Adds `gesture` so that it is complete at `end` seconds (a device detects a gesture once it happened).
    mutating func perform(_ gesture: Gesture, endingAt end: Double) {
        switch gesture {
        case .nod: movements.append(Scheduled(start: end - Self.nodDuration, duration: Self.nodDuration, movement: .nod))
        case .shake: movements.append(Scheduled(start: end - Self.shakeDuration, duration: Self.shakeDuration, movement: .shake))
        case .doubleTap:
            for start in [end - Self.tapGap, end] {
                movements.append(Scheduled(start: start - 0.05, duration: 0.1, movement: .tap))
            }
        }
    }

    /// The readings at `time` seconds. Times should not go backwards by more than a second: finished movements
    /// are folded away.
    mutating func sample(at time: Double) -> Reading {
        planTurns(until: time)
        let relative = orientation(at: time)
        let world = Quaternion(axis: Vector(x: 0, y: 0, z: 1), angle: radians(startHeading)) * relative
        let rotation = world.canonical

        // Angular velocity in the head frame from the change of orientation over ±1 ms.
        let step = 0.001
        let delta = orientation(at: time - step).conjugate * orientation(at: time + step)
        let sign = delta.w < 0 ? -1.0 : 1.0
        let perSecond = sign / step * 180 / .pi
        var angularVelocity = Vector(x: delta.x * perSecond, y: delta.y * perSecond, z: delta.z * perSecond) + gyroscopeBias

        var acceleration = rotation.conjugate.rotate(Vector(x: 0, y: 0, z: -Self.gravity))
        acceleration.x += tapAcceleration(at: time)
        let field = rotation.conjugate.rotate(Self.earthField)

        acceleration = acceleration + noise(0.04)
        angularVelocity = angularVelocity + noise(0.15)
        let magneticField = field + noise(0.3)
        let rotationAccuracy = accuracy.advance(using: &random)

        let drift = radians(0.5 / 60 * time)
        let game = (Quaternion(axis: Vector(x: 0, y: 0, z: 1), angle: drift) * relative).canonical
        let (yaw, pitch, roll) = angles(at: time)
        let heading = wrapped(startHeading + yaw)
        return Reading(acceleration: acceleration, angularVelocity: angularVelocity, rotation: rotation,
                       rotationAccuracy: rotationAccuracy, gameRotation: game,
                       orientation: Vector(x: pitch, y: roll, z: heading), magneticField: magneticField,
                       magnetometerBias: magnetometerBias)
    }

    /// Yaw, pitch and roll in degrees, relative to the starting heading.
    private func angles(at time: Double) -> (yaw: Double, pitch: Double, roll: Double) {
        func wave(_ index: Int) -> Double {
            sway[index].amplitude * sin(2 * .pi * sway[index].hertz * time + sway[index].phase)
        }
        var yaw = baseYaw + wave(4) + wave(5)
        var pitch = wave(0) + wave(1)
        let roll = wave(2) + wave(3)
        for movement in movements where time > movement.start {
            let progress = min(1, (time - movement.start) / movement.duration)
            switch movement.movement {
            case .turn(let degrees): yaw += degrees * (1 - cos(.pi * progress)) / 2
            case .nod: pitch -= 15 * (1 - cos(4 * .pi * progress)) / 2
            case .shake: yaw += 25 * sin(4 * .pi * progress) * sin(.pi * progress)
            case .tap: break
            }
        }
        return (yaw, pitch, roll)
    }

    /// Head → the frame facing the starting heading.
    private func orientation(at time: Double) -> Quaternion {
        let (yaw, pitch, roll) = angles(at: time)
        return Quaternion(axis: Vector(x: 0, y: 0, z: 1), angle: radians(yaw))
            * Quaternion(axis: Vector(x: 1, y: 0, z: 0), angle: radians(pitch))
            * Quaternion(axis: Vector(x: 0, y: 1, z: 0), angle: radians(roll))
    }

    /// A knock on the temple: a pulse about 40 ms wide peaking at 1.5 g, so that 20 ms samples always catch
    /// most of it.
    private func tapAcceleration(at time: Double) -> Double {
        movements.reduce(0) { sum, movement in
            guard case .tap = movement.movement else { return sum }
            let offset = (time - (movement.start + movement.duration / 2)) / 0.02
            return sum + 1.5 * Self.gravity * exp(-offset * offset)
        }
    }

    /// Plans the random head turns up to `time` and folds away movements that ended more than a second ago.
    private mutating func planTurns(until time: Double) {
        while nextTurn <= time {
            let target = Double.random(in: -60...60, using: &random)
            // Slow: at most about 45°/s on average, so a turn peaks near 70°/s.
            let duration = max(0.8, abs(target - plannedYaw) / 45) * Double.random(in: 1...1.5, using: &random)
            movements.append(Scheduled(start: nextTurn, duration: duration, movement: .turn(byDegrees: target - plannedYaw)))
            plannedYaw = target
            nextTurn += duration + Double.random(in: 4...12, using: &random)
        }
        movements.removeAll { movement in
            guard movement.end < time - 1 else { return false }
            if case .turn(let degrees) = movement.movement { baseYaw += degrees }
            return true
        }
    }

    private mutating func noise(_ amplitude: Double) -> Vector {
        Vector(x: Double.random(in: -amplitude...amplitude, using: &random),
               y: Double.random(in: -amplitude...amplitude, using: &random),
               z: Double.random(in: -amplitude...amplitude, using: &random))
    }

    private func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }

    private func wrapped(_ degrees: Double) -> Double {
        let turned = (degrees + 180).truncatingRemainder(dividingBy: 360)
        return (turned < 0 ? turned + 360 : turned) - 180
    }
}
