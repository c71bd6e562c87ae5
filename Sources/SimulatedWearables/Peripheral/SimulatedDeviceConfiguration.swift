import EventLoop
import Wearables

/// One value of a device's kind-specific options, as a scenario file gives it.
public enum SimulationOptionValue: Sendable, Equatable, CustomStringConvertible {
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)

    public var description: String {
        switch self {
        case .bool(let value): "\(value)"
        case .int(let value): "\(value)"
        case .double(let value): "\(value)"
        case .string(let value): "\"\(value)\""
        }
    }
}

/// What a simulated device is made from: the generic settings every kind understands and the options only its
/// kind reads.
public struct SimulatedDeviceConfiguration: Sendable {
    /// The advertised (and GAP) name; nil keeps the kind's default.
    public var name: String?
    /// The seed of every random value this device produces.
    public var seed: UInt64
    public var options: [String: SimulationOptionValue]
    /// The device's Bluetooth address (`AA:BB:CC:DD:EE:FF`) when the host knows it, for devices that report their
    /// own address or derive a serial number from it; nil in peripheral mode, where the adapter's address is the
    /// device's.
    public var address: String?
    /// The clock the device's schedules run on (its samples, its delays, its own clock): the system's in the
    /// simulator, a test's `ManualClock` where the test moves time.
    public var time: TimeSource

    public init(name: String? = nil, seed: UInt64 = 1, options: [String: SimulationOptionValue] = [:],
                address: String? = nil, time: TimeSource = .system) {
        self.name = name
        self.seed = seed
        self.options = options
        self.address = address
        self.time = time
    }
}

/// A device option that is missing its mark: the message names the key, so a scenario author can fix it.
public enum SimulatedDeviceConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidOption(key: String, reason: String)
    case unknownOption(key: String, known: [String])

    public var key: String {
        switch self {
        case .invalidOption(let key, _), .unknownOption(let key, _): key
        }
    }

    public var description: String {
        switch self {
        case .invalidOption(let key, let reason): "\(key): \(reason)"
        case .unknownOption(let key, let known): "\(key): unknown option (known: \(known.sorted().joined(separator: ", ")))"
        }
    }
}

/// Reads a device's options with their types, ranges and defaults, and remembers which keys it read, so a
/// misspelt key is reported instead of silently ignored.
public struct SimulationOptionReader {
    private let options: [String: SimulationOptionValue]
    private var known: Set<String> = []

    public init(_ options: [String: SimulationOptionValue]) { self.options = options }

    public mutating func double(_ key: String, default fallback: Double, in range: ClosedRange<Double>)
        throws(SimulatedDeviceConfigurationError) -> Double
    {
        known.insert(key)
        guard let raw = options[key] else { return fallback }
        let number: Double
        switch raw {
        case .int(let value): number = Double(value)
        case .double(let value): number = value
        default: throw .invalidOption(key: key, reason: "expected a number, got \(raw)")
        }
        guard range.contains(number) else {
            throw .invalidOption(key: key, reason: "must be between \(range.lowerBound) and \(range.upperBound), got \(raw)")
        }
        return number
    }

    public mutating func int(_ key: String, default fallback: Int, in range: ClosedRange<Int>)
        throws(SimulatedDeviceConfigurationError) -> Int
    {
        known.insert(key)
        guard let raw = options[key] else { return fallback }
        guard case .int(let number) = raw else { throw .invalidOption(key: key, reason: "expected a whole number, got \(raw)") }
        guard range.contains(number) else {
            throw .invalidOption(key: key, reason: "must be between \(range.lowerBound) and \(range.upperBound), got \(number)")
        }
        return number
    }

    public mutating func bool(_ key: String, default fallback: Bool) throws(SimulatedDeviceConfigurationError) -> Bool {
        known.insert(key)
        guard let raw = options[key] else { return fallback }
        guard case .bool(let value) = raw else { throw .invalidOption(key: key, reason: "expected true or false, got \(raw)") }
        return value
    }

    /// A string, or one of `allowed` when given.
    public mutating func string(_ key: String, default fallback: String, allowed: [String]? = nil)
        throws(SimulatedDeviceConfigurationError) -> String
    {
        known.insert(key)
        guard let raw = options[key] else { return fallback }
        let text: String
        switch raw {
        case .string(let value): text = value
        case .int(let value): text = String(value)
        case .double(let value): text = String(value)
        case .bool: throw .invalidOption(key: key, reason: "expected text, got \(raw)")
        }
        if let allowed, !allowed.contains(text) {
            throw .invalidOption(key: key, reason: "must be one of \(allowed.joined(separator: ", ")), got \"\(text)\"")
        }
        return text
    }

    /// Throws for the first key no read asked for.
    public func rejectUnknownKeys() throws(SimulatedDeviceConfigurationError) {
        if let unknown = options.keys.sorted().first(where: { !known.contains($0) }) {
            throw .unknownOption(key: unknown, known: Array(known))
        }
    }
}
