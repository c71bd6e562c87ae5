import Foundation

/// A long RR series whose time-domain measures are known in closed form: respiratory sinus arrhythmia as a sine,
/// x_k = 800 + 60·sin(2πk/5) ms for k = 0…1000 (a breath every 5 beats, 75 bpm on average).
///
/// With N = 1001 intervals (200 whole periods and k = 0 once more, where the sine is 0): the mean is exactly 800 ms;
/// Σ(x − 800)² = 60²·1000/2, so SDNN (N − 1) = 60/√2; the 1000 successive differences are 2·60·sin(π/5)·cos(2π(k + ½)/5)
/// over whole periods, so RMSSD = √2·60·sin(π/5) = 49.875 ms; three of every five differences exceed 50 ms in size
/// (70.5, 57.1, 57.1 ms against 21.8, 21.8), so pNN50 = 60 %. No difference reaches 20 % of an interval (70.5 of ≥ 743).
enum RespiratoryRRSeries {
    static let intervals: [Double] = (0...1000).map { 800 + 60 * sin(2 * Double.pi * Double($0) / 5) }
    static let meanNN = 800.0
    static let sdnn = 60 / 2.0.squareRoot()
    static let rmssd = 2.0.squareRoot() * 60 * sin(Double.pi / 5)
    static let pnn50 = 60.0
}
