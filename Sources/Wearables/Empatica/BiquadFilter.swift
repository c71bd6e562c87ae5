import Glibc

/// A second-order IIR section (transposed direct form II) with Butterworth low- and high-pass designs from
/// the bilinear transform (R. Bristow-Johnson, "Cookbook formulae for audio EQ biquad filter coefficients").
/// Cascading sections with the Q values of `butterworthQ(order:)` gives a Butterworth filter of that order.
///
/// Causal and streaming, so it delays what it passes.
struct BiquadFilter: Sendable, Equatable {
    private let b0, b1, b2, a1, a2: Double
    private var state1 = 0.0
    private var state2 = 0.0

    private init(b0: Double, b1: Double, b2: Double, a0: Double, a1: Double, a2: Double) {
        self.b0 = b0 / a0
        self.b1 = b1 / a0
        self.b2 = b2 / a0
        self.a1 = a1 / a0
        self.a2 = a2 / a0
    }

    static func lowPass(cutoffHertz: Double, sampleRate: Double, q: Double) -> BiquadFilter {
        let w0 = 2 * Double.pi * cutoffHertz / sampleRate
        let alpha = sin(w0) / (2 * q)
        let c = cos(w0)
        return BiquadFilter(b0: (1 - c) / 2, b1: 1 - c, b2: (1 - c) / 2, a0: 1 + alpha, a1: -2 * c, a2: 1 - alpha)
    }

    static func highPass(cutoffHertz: Double, sampleRate: Double, q: Double) -> BiquadFilter {
        let w0 = 2 * Double.pi * cutoffHertz / sampleRate
        let alpha = sin(w0) / (2 * q)
        let c = cos(w0)
        return BiquadFilter(b0: (1 + c) / 2, b1: -(1 + c), b2: (1 + c) / 2, a0: 1 + alpha, a1: -2 * c, a2: 1 - alpha)
    }

    /// The Q of each section of an even-order Butterworth filter: 1 / (2 sin((2k − 1)π / 2n)).
    static func butterworthQ(order: Int) -> [Double] {
        let n = Double(order)
        return (1...max(1, order / 2)).map { k in 1 / (2 * sin((2 * Double(k) - 1) * .pi / (2 * n))) }
    }

    mutating func process(_ x: Double) -> Double {
        let y = b0 * x + state1
        state1 = b1 * x - a1 * y + state2
        state2 = b2 * x - a2 * y
        return y
    }
}
