/// A characteristic value with a fixed layout: the gateway's drivers decode what devices send, and the
/// simulator encodes what its simulated devices notify, from the same code.
///
/// `decode(encode())` gives back an equal value for every value a type can hold; that is why the measurement
/// types store wire-level integers and IEEE-11073 bit patterns rather than rounded SI values. The SIG codecs
/// ignore bytes beyond the last field the flags announce, because real devices pad notifications to a fixed
/// length; vendor packets without flags (Empatica E4) refuse extra bytes instead, since those mean a layout we
/// do not know.
public protocol GATTCharacteristicValue: Sendable, Equatable {
    /// The 16-bit assigned number of the characteristic this value belongs to.
    static var characteristicUUID: UInt16 { get }
    static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> Self
    func encode() -> [UInt8]
}
