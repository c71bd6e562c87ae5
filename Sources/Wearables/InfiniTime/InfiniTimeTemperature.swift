/// A temperature as the Simple Weather Service sends it: °C × 100 in an `int16_t`, little-endian
/// (`InfiniTimeOrg/InfiniTime` `doc/SimpleWeatherService.md`; `Temperature` and `ToInt16` in
/// `src/components/ble/SimpleWeatherService.h` / `.cpp`). The watch converts to °F itself when the user chose
/// Fahrenheit, so the host always sends Celsius. Range −327.68 … 327.67 °C.
public struct InfiniTimeTemperature: Hashable, Sendable {
    public let hundredthsOfDegreeCelsius: Int16

    public init(hundredthsOfDegreeCelsius: Int16) { self.hundredthsOfDegreeCelsius = hundredthsOfDegreeCelsius }

    /// Rounded to the nearest hundredth; throws `outOfRange` (in hundredths) beyond what an `int16_t` holds.
    public init(celsius: Double) throws(GATTCodecError) {
        let hundredths = (celsius * 100).rounded()
        guard let exact = Int16(exactly: hundredths) else {
            throw .outOfRange(field: "temperature", value: Int(exactly: hundredths) ?? (hundredths < 0 ? Int.min : Int.max))
        }
        hundredthsOfDegreeCelsius = exact
    }

    public var celsius: Double { Double(hundredthsOfDegreeCelsius) / 100 }

    static func read(from reader: inout ByteReader) throws(GATTCodecError) -> InfiniTimeTemperature {
        InfiniTimeTemperature(hundredthsOfDegreeCelsius: try reader.readInt16())
    }

    func write(to writer: inout ByteWriter) { writer.write(hundredthsOfDegreeCelsius) }
}
