/// What a sensor's samples look like, for clients that plot them without knowing the sensor: the shape picks the
/// plot (three axes, a waveform, beat intervals as a tachogram), the fields name the values in each sample.
extension SensorKind {
    public enum Shape: String, Sendable {
        /// One reading at a time (a heart rate, a temperature), plotted as a line.
        case scalar
        /// Three axes (`x`, `y`, `z`).
        case vector
        /// A rotation as a unit quaternion (`x`, `y`, `z`, `w`).
        case quaternion
        /// A signal sampled fast enough to draw its wave (ECG, PPG, BVP).
        case waveform
        /// One sample per beat, its interval.
        case beatIntervals = "beat_intervals"
    }

    public var shape: Shape {
        switch self {
        case .accelerometer, .gyroscope, .magnetometer, .uncalibratedMagnetometer, .orientation: .vector
        case .rotation, .gameRotation: .quaternion
        case .ecg, .ppg, .bvp: .waveform
        case .ibi, .ppi: .beatIntervals
        case .heartRate, .eda, .skinTemperature, .temperature, .spo2, .running, .cycling, .steps, .hrv: .scalar
        }
    }

    /// The numeric fields of one sample (`sensor/<kind>` payloads, docs/mqtt-api.md), the plotted one first.
    public var fields: [String] {
        switch self {
        case .accelerometer, .gyroscope, .magnetometer, .orientation: ["x", "y", "z"]
        case .uncalibratedMagnetometer: ["x", "y", "z", "bias_x", "bias_y", "bias_z"]
        case .rotation, .gameRotation: ["x", "y", "z", "w"]
        case .heartRate: ["bpm", "energy_kj"]
        case .eda: ["microsiemens"]
        case .bvp: ["value"]
        case .ibi: ["seconds"]
        case .skinTemperature, .temperature: ["celsius"]
        case .spo2: ["percent", "pulse_bpm"]
        case .running: ["speed_mps", "cadence_spm", "stride_m", "distance_m"]
        case .cycling: ["speed_mps", "cadence_rpm", "wheel_revs", "crank_revs"]
        case .steps: ["steps"]
        case .hrv: ["rmssd_ms", "sdnn_ms", "mean_hr_bpm"]
        case .ecg: ["uv"]
        case .ppg: ["values", "ambient"]
        case .ppi: ["interval_ms", "error_ms", "bpm"]
        }
    }
}
