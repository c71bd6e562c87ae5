/// The E4's four sensor streams with the nominal rates the EmpaLink SDK documents and the samples per packet
/// of our codecs: what `E4SampleClock` needs to put a time on every sample.
///
/// The packets carry no timestamps (no source found any), so times come from counting samples at the nominal
/// rate from the start command. Rates: SDK reference and Empatica's streaming-server documentation — BVP 64 Hz,
/// accelerometer 32 Hz, EDA 4 Hz, skin temperature 4 Hz.
public enum E4Stream: String, Sendable, Hashable, CaseIterable {
    case bvp, accelerometer, eda, temperature

    public var samplesPerSecond: Int {
        switch self {
        case .bvp: 64
        case .accelerometer: 32
        case .eda, .temperature: 4
        }
    }

    /// The samples of a whole packet; for the accelerometer the fewest one holds and what the simulated E4 sends
    /// (a real packet may hold more: the driver times the samples each packet really held).
    public var samplesPerPacket: Int {
        switch self {
        case .bvp: E4BVPPacket.samplesPerPacket
        case .accelerometer: E4AccelerometerPacket.samplesPerPacket
        case .eda: E4EDAPacket.samplesPerPacket
        case .temperature: E4TemperaturePacket.samplesPerPacket
        }
    }

    /// Only the EDA packet has a counter, so only EDA can notice lost packets.
    public var hasPacketCounter: Bool { self == .eda }

    public var characteristicUUID: UInt16 {
        switch self {
        case .bvp: E4UUID.Short.bvp
        case .accelerometer: E4UUID.Short.accelerometer
        case .eda: E4UUID.Short.eda
        case .temperature: E4UUID.Short.temperature
        }
    }
}
