import Foundation
import Wearables

/// What the simulated wearer does while the Link streams: the option `activity`.
public enum ActiGraphSimulatedActivity: String, Sendable, CaseIterable {
    case walking
    case resting
    /// 60 s walking, 60 s resting, on the minutes of Unix time (even minutes walking), so raw and IMU agree.
    case alternating

    public func isWalking(atUnixSeconds time: Double) -> Bool {
        switch self {
        case .walking: true
        case .resting: false
        case .alternating: Int64((time / 60).rounded(.down)) % 2 == 0
        }
    }
}

/// Three axes in a sensor's unit (g, °/s, µT).
public struct ActiGraphVector: Sendable, Equatable {
    public var x: Double
    public var y: Double
    public var z: Double

    public init(x: Double, y: Double, z: Double) {
        self.x = x
        self.y = y
        self.z = z
    }

    public var magnitude: Double { (x * x + y * y + z * z).squareRoot() }
}

/// The Link on a wrist, as its sensors see it at any Unix time. The shape of the motion is a function of time
/// (so the raw stream and the IMU accelerometer show the same steps); the sensor noise comes from the seed.
///
/// Axes: y is vertical (it carries gravity's reaction, +1 g, standing or sitting), x lateral, z forward.
/// - **walking**: a step cadence that wanders between 1.8 and 2.0 steps/s; a vertical bounce of 0.3–0.5 g at every
///   step around gravity, a lateral sway of 0.12 g once per stride (two steps), 0.2 g fore-aft at the step rate,
///   0.02 g of noise; the arm swings ±70 °/s per stride about x and turns the magnetic field by ±15°.
/// - **resting**: gravity on y with a tilt of 3–10° about x and z, a new posture every minute, noise of 0.004 g
///   (clipped at ±0.01 g) and gyroscope noise of 0.3 °/s around a small bias.
/// - Magnetic field ≈ 46 µT (Europe's, `(20, −40, 8)` µT in the Link's axes), 0.4 µT of noise. Skin-side
///   temperature 32 ± 0.6 °C over 15 minutes, within 31–33 °C.
///
/// Not modeled: turning, gestures, the sensors' offset and gain errors, temperature following the activity.
public struct ActiGraphWristMotion: Sendable {
    public static let cadenceRange: ClosedRange<Double> = 1.8...2.0
    static let earthField = ActiGraphVector(x: 20, y: -40, z: 8)

    public let activity: ActiGraphSimulatedActivity
    private let seed: UInt64
    private var random: SimulationRandom

    public init(activity: ActiGraphSimulatedActivity, seed: UInt64) {
        self.activity = activity
        self.seed = seed
        random = SimulationRandom(seed: seed)
    }

    // MARK: Sensors

    /// Specific force in g: gravity's reaction plus motion, with noise.
    public mutating func acceleration(atUnixSeconds time: Double) -> ActiGraphVector {
        guard activity.isWalking(atUnixSeconds: time) else {
            let gravity = restingGravity(atUnixSeconds: time)
            return ActiGraphVector(x: gravity.x + restNoise(), y: gravity.y + restNoise(), z: gravity.z + restNoise())
        }
        let step = Self.stepPhase(atUnixSeconds: time)
        let stride = Self.stridePhase(atUnixSeconds: time)
        let bounce = 0.4 + 0.1 * sin(2 * .pi * (time / 23).fraction)
        return ActiGraphVector(x: 0.05 + 0.12 * sin(stride) + gaussian(0.02),
                               y: 0.99 + bounce * sin(step) + gaussian(0.02),
                               z: 0.1 + 0.2 * sin(step + .pi / 3) + gaussian(0.02))
    }

    /// Angular rate in °/s.
    public mutating func rotation(atUnixSeconds time: Double) -> ActiGraphVector {
        guard activity.isWalking(atUnixSeconds: time) else {
            return ActiGraphVector(x: 0.2 + gaussian(0.3), y: -0.1 + gaussian(0.3), z: 0.3 + gaussian(0.3))
        }
        let step = Self.stepPhase(atUnixSeconds: time)
        let stride = Self.stridePhase(atUnixSeconds: time)
        return ActiGraphVector(x: 70 * cos(stride) + gaussian(1.5), y: 12 * sin(step) + gaussian(1.5),
                               z: 20 * sin(stride + 0.5) + gaussian(1.5))
    }

    /// Magnetic flux density in µT: the Earth's field, turned by the arm swing while walking.
    public mutating func magneticField(atUnixSeconds time: Double) -> ActiGraphVector {
        let field = Self.earthField
        let turn = activity.isWalking(atUnixSeconds: time)
            ? 15 * .pi / 180 * sin(Self.stridePhase(atUnixSeconds: time)) : 0
        return ActiGraphVector(x: field.x * cos(turn) - field.z * sin(turn) + gaussian(0.4),
                               y: field.y + gaussian(0.4),
                               z: field.x * sin(turn) + field.z * cos(turn) + gaussian(0.4))
    }

    /// Skin-side temperature in °C.
    public mutating func skinTemperature(atUnixSeconds time: Double) -> Double {
        min(max(32 + 0.6 * sin(2 * .pi * (time / 900).fraction) + gaussian(0.03), 31), 33)
    }

    // MARK: Shape

    /// The step cycle's phase in radians: the integral of a cadence of 1.9 + 0.1 × sin(2π t / 37 s) steps/s.
    static func stepPhase(atUnixSeconds time: Double) -> Double {
        2 * .pi * ((1.9 * time).fraction - 0.1 * 37 / (2 * .pi) * cos(2 * .pi * (time / 37).fraction))
    }

    /// Half the step phase: one stride is two steps.
    static func stridePhase(atUnixSeconds time: Double) -> Double {
        2 * .pi * ((0.95 * time).fraction - 0.05 * 37 / (2 * .pi) * cos(2 * .pi * (time / 37).fraction))
    }

    /// Gravity's reaction for the posture of the minute `time` falls in: tilted 3–10° about z and about x.
    func restingGravity(atUnixSeconds time: Double) -> ActiGraphVector {
        var posture = ActiGraphSimulatedEpochs.random(seed, salt: 3, Int64((time / 60).rounded(.down)))
        func tilt() -> Double {
            Double.random(in: 3...10, using: &posture) * .pi / 180 * (Bool.random(using: &posture) ? 1 : -1)
        }
        let aboutZ = tilt()
        let aboutX = tilt()
        return ActiGraphVector(x: sin(aboutZ), y: cos(aboutZ) * cos(aboutX), z: cos(aboutZ) * sin(aboutX))
    }

    private mutating func restNoise() -> Double { min(max(gaussian(0.004), -0.01), 0.01) }

    /// Gaussian noise of standard deviation `sigma` (Box–Muller).
    private mutating func gaussian(_ sigma: Double) -> Double {
        let u = Double.random(in: Double.ulpOfOne..<1, using: &random)
        let v = Double.random(in: 0..<1, using: &random)
        return sigma * (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }
}

extension Double {
    /// The part after the point, 0 ≤ f < 1 (for negative values too): keeps phases of Unix times precise.
    fileprivate var fraction: Double { self - rounded(.down) }
}
