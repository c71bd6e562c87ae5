import Wearables

/// `<id>/sensor/<sensor>` payloads: one sample `{"ts":…, …}` or a batch `{"samples":[…]}`.
///
/// Keys come in the contract's order with `ts` first; optional values the device did not send are left out
/// (never `null`), and `rr_ms` only appears when the message carried RR intervals. The reading decides the
/// keys, the sample's `sensor` only the topic.
public enum SamplePayload {
    public static func single(_ sample: SensorSample) -> [UInt8] {
        var writer = JSONWriter()
        writer.sample(sample)
        return writer.bytes
    }

    public static func batch(_ samples: some Collection<SensorSample>) -> [UInt8] {
        var writer = JSONWriter(capacity: 16 + samples.count * 96)
        writer.beginObject()
        writer.key("samples")
        writer.beginArray()
        for sample in samples { writer.sample(sample) }
        writer.endArray()
        writer.endObject()
        return writer.bytes
    }
}

extension JSONWriter {
    /// One sample object.
    public mutating func sample(_ sample: SensorSample) {
        beginObject()
        field("ts", sample.timestamp)
        switch sample.reading {
        case .vector(let x, let y, let z, let accuracy):
            field("x", x)
            field("y", y)
            field("z", z)
            optionalField("accuracy", accuracy?.rawValue)
        case .quaternion(let x, let y, let z, let w, let accuracy):
            field("x", x)
            field("y", y)
            field("z", z)
            field("w", w)
            optionalField("accuracy", accuracy)
        case .uncalibratedVector(let x, let y, let z, let biasX, let biasY, let biasZ):
            field("x", x)
            field("y", y)
            field("z", z)
            field("bias_x", biasX)
            field("bias_y", biasY)
            field("bias_z", biasZ)
        case .heartRate(let bpm, let contact, let energy, let rrIntervals):
            field("bpm", bpm)
            optionalField("contact", contact)
            optionalField("energy_kj", energy)
            if !rrIntervals.isEmpty {
                key("rr_ms")
                beginArray()
                for interval in rrIntervals { number(interval) }
                endArray()
            }
        case .eda(let microsiemens):
            field("microsiemens", microsiemens)
        case .bvp(let value):
            field("value", value)
        case .ibi(let seconds):
            field("seconds", seconds)
        case .celsius(let celsius):
            field("celsius", celsius)
        case .spo2(let percent, let pulse):
            field("percent", percent)
            optionalField("pulse_bpm", pulse)
        case .running(let speed, let cadence, let stride, let distance, let isRunning):
            field("speed_mps", speed)
            field("cadence_spm", cadence)
            optionalField("stride_m", stride)
            optionalField("distance_m", distance)
            optionalField("running", isRunning)
        case .cycling(let wheelRevolutions, let crankRevolutions, let speed, let cadence):
            optionalField("wheel_revs", wheelRevolutions.map(Int64.init))
            optionalField("crank_revs", crankRevolutions.map(Int64.init))
            optionalField("speed_mps", speed)
            optionalField("cadence_rpm", cadence)
        case .heartRateVariability(let variability):
            // Too few clean intervals: the measures are left out (never null), the counts say why.
            if let measures = variability.measures {
                field("rmssd_ms", measures.rmssdMilliseconds)
                field("sdnn_ms", measures.sdnnMilliseconds)
                field("pnn50_pct", measures.pnn50Percent)
                field("mean_hr_bpm", measures.meanHeartRateBPM)
            }
            field("intervals", variability.intervals)
            field("rejected", variability.rejected)
            field("window_s", variability.windowSeconds)
        case .ecg(let microvolts):
            field("uv", microvolts)
        case .ppg(let channels, let ambient):
            key("values")
            beginArray()
            for value in channels { integer(value) }
            endArray()
            optionalField("ambient", ambient)
        case .pulseInterval(let interval):
            field("interval_ms", interval.milliseconds)
            field("error_ms", interval.errorEstimateMilliseconds)
            field("bpm", interval.heartRate)
            field("blocker", interval.blocker)
            optionalField("contact", interval.skinContact)
        case .steps(let count):
            field("steps", count)
        }
        endObject()
    }
}
