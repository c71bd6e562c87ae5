import Testing
import Wearables

@testable import Gateway

private let ts: Int64 = 1_795_298_704_123

private func json(_ sensor: SensorKind, _ reading: SensorReading) -> String {
    String(decoding: SamplePayload.single(SensorSample(sensor: sensor, timestamp: ts, reading: reading)), as: UTF8.self)
}

@Suite("Sample payloads: the contract's keys, in order, absent optionals left out")
struct SamplePayloadTests {
    @Test("accelerometer, gyroscope, magnetometer, orientation: {ts,x,y,z,accuracy}")
    func vectors() {
        #expect(json(.accelerometer, .vector(x: 0.01, y: -9.80665, z: 0.5, accuracy: .high))
            == #"{"ts":1795298704123,"x":0.01,"y":-9.80665,"z":0.5,"accuracy":"high"}"#)
        #expect(json(.gyroscope, .vector(x: 1, y: 2, z: 3, accuracy: .unreliable))
            == #"{"ts":1795298704123,"x":1.0,"y":2.0,"z":3.0,"accuracy":"unreliable"}"#)
        #expect(json(.magnetometer, .vector(x: -31.5, y: 12.25, z: 40, accuracy: .medium))
            == #"{"ts":1795298704123,"x":-31.5,"y":12.25,"z":40.0,"accuracy":"medium"}"#)
        #expect(json(.orientation, .vector(x: 359.9, y: -0.1, z: 0, accuracy: nil))
            == #"{"ts":1795298704123,"x":359.9,"y":-0.1,"z":0.0}"#)
    }

    @Test("rotation and game_rotation: {ts,x,y,z,w,accuracy?}")
    func quaternions() {
        #expect(json(.rotation, .quaternion(x: 0.1, y: 0.2, z: 0.3, w: 0.927, accuracy: 0.05))
            == #"{"ts":1795298704123,"x":0.1,"y":0.2,"z":0.3,"w":0.927,"accuracy":0.05}"#)
        #expect(json(.gameRotation, .quaternion(x: 0, y: 0, z: 0, w: 1, accuracy: nil))
            == #"{"ts":1795298704123,"x":0.0,"y":0.0,"z":0.0,"w":1.0}"#)
    }

    @Test("uncalibrated_magnetometer: {ts,x,y,z,bias_x,bias_y,bias_z}")
    func uncalibrated() {
        #expect(json(.uncalibratedMagnetometer, .uncalibratedVector(x: 1.5, y: 2.5, z: 3.5, biasX: 0.25, biasY: -0.25, biasZ: 0.125))
            == #"{"ts":1795298704123,"x":1.5,"y":2.5,"z":3.5,"bias_x":0.25,"bias_y":-0.25,"bias_z":0.125}"#)
    }

    @Test("heart_rate: {ts,bpm,contact?,energy_kj?,rr_ms?}, rr_ms only when the message had RR intervals")
    func heartRate() {
        #expect(json(.heartRate, .heartRate(bpm: 72, contact: true, energyExpendedKJ: 130, rrIntervalsMilliseconds: [781.25, 812.5]))
            == #"{"ts":1795298704123,"bpm":72,"contact":true,"energy_kj":130,"rr_ms":[781.25,812.5]}"#)
        #expect(json(.heartRate, .heartRate(bpm: 180, contact: nil, energyExpendedKJ: nil, rrIntervalsMilliseconds: []))
            == #"{"ts":1795298704123,"bpm":180}"#)
        #expect(json(.heartRate, .heartRate(bpm: 60, contact: false, energyExpendedKJ: nil, rrIntervalsMilliseconds: [1000]))
            == #"{"ts":1795298704123,"bpm":60,"contact":false,"rr_ms":[1000.0]}"#)
    }

    @Test("eda, bvp, ibi, skin_temperature, temperature: one named value")
    func singleValues() {
        #expect(json(.eda, .eda(microsiemens: 0.164)) == #"{"ts":1795298704123,"microsiemens":0.164}"#)
        #expect(json(.bvp, .bvp(value: -12.34)) == #"{"ts":1795298704123,"value":-12.34}"#)
        #expect(json(.ibi, .ibi(seconds: 0.796875)) == #"{"ts":1795298704123,"seconds":0.796875}"#)
        #expect(json(.skinTemperature, .celsius(33.17)) == #"{"ts":1795298704123,"celsius":33.17}"#)
        #expect(json(.temperature, .celsius(36.6)) == #"{"ts":1795298704123,"celsius":36.6}"#)
    }

    @Test("spo2: {ts,percent,pulse_bpm?}")
    func spo2() {
        #expect(json(.spo2, .spo2(percent: 97, pulseBPM: 64)) == #"{"ts":1795298704123,"percent":97.0,"pulse_bpm":64.0}"#)
        #expect(json(.spo2, .spo2(percent: 95.5, pulseBPM: nil)) == #"{"ts":1795298704123,"percent":95.5}"#)
    }

    @Test("running: {ts,speed_mps,cadence_spm,stride_m?,distance_m?,running?}")
    func running() {
        #expect(json(.running, .running(speedMetresPerSecond: 3.25, cadenceStepsPerMinute: 172, strideMetres: 1.13,
                                        totalDistanceMetres: 5012.3, isRunning: true))
            == #"{"ts":1795298704123,"speed_mps":3.25,"cadence_spm":172,"stride_m":1.13,"distance_m":5012.3,"running":true}"#)
        #expect(json(.running, .running(speedMetresPerSecond: 1.4, cadenceStepsPerMinute: 100, strideMetres: nil,
                                        totalDistanceMetres: nil, isRunning: nil))
            == #"{"ts":1795298704123,"speed_mps":1.4,"cadence_spm":100}"#)
    }

    @Test("cycling: {ts,wheel_revs?,crank_revs?,speed_mps?,cadence_rpm?}")
    func cycling() {
        #expect(json(.cycling, .cycling(wheelRevolutions: 4_294_967_295, crankRevolutions: 65535, speedMetresPerSecond: 8.5,
                                        cadenceRPM: 90))
            == #"{"ts":1795298704123,"wheel_revs":4294967295,"crank_revs":65535,"speed_mps":8.5,"cadence_rpm":90.0}"#)
        #expect(json(.cycling, .cycling(wheelRevolutions: nil, crankRevolutions: 12, speedMetresPerSecond: nil, cadenceRPM: 88.5))
            == #"{"ts":1795298704123,"crank_revs":12,"cadence_rpm":88.5}"#)
    }

    @Test("a value the sensor could not measure (NaN) is null, and the payload stays valid JSON")
    func nonFiniteValue() throws {
        let text = json(.temperature, .celsius(.nan))
        #expect(text == #"{"ts":1795298704123,"celsius":null}"#)
        #expect(try JSONParser.parse(Array(text.utf8)) == ["ts": .integer(ts), "celsius": nil])
    }

    @Test("a batch is {\"samples\":[…]} with each sample as it would be alone")
    func batch() {
        let samples = [
            SensorSample(sensor: .heartRate, timestamp: 1, reading: .heartRate(bpm: 70, contact: nil, energyExpendedKJ: nil, rrIntervalsMilliseconds: [])),
            SensorSample(sensor: .heartRate, timestamp: 2, reading: .heartRate(bpm: 71, contact: true, energyExpendedKJ: nil, rrIntervalsMilliseconds: [845.5])),
        ]
        #expect(String(decoding: SamplePayload.batch(samples), as: UTF8.self)
            == #"{"samples":[{"ts":1,"bpm":70},{"ts":2,"bpm":71,"contact":true,"rr_ms":[845.5]}]}"#)
        #expect(String(decoding: SamplePayload.batch([SensorSample]()), as: UTF8.self) == #"{"samples":[]}"#)
    }
}
