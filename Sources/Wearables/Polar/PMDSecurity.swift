/// The security setting a start request may end with: how the device encrypts an offline recording and the
/// key. Written as type 6, count 1, strategy byte, then the key's bytes (`PmdSecret.serializeToPmdSettings`).
///
/// Source: `polarofficial/polar-ble-sdk` Android `pmd/PmdSecret.kt`: no key for `none`, at least one byte for
/// `xor`, 16 for AES-128 and 32 for AES-256. Only offline recordings use it; the codecs carry it so a start
/// request round-trips, no driver sets it yet.
public struct PMDSecurity: Sendable, Hashable {
    public enum Strategy: UInt8, Sendable, Hashable {
        case none = 0
        case xor = 1
        case aes128 = 2
        case aes256 = 3
    }

    public let strategy: Strategy
    public let key: [UInt8]

    /// Throws `outOfRange` of the key length when it does not fit the strategy.
    public init(strategy: Strategy, key: [UInt8]) throws(GATTCodecError) {
        let fits = switch strategy {
        case .none: key.isEmpty
        case .xor: !key.isEmpty
        case .aes128: key.count == 16
        case .aes256: key.count == 32
        }
        guard fits else { throw .outOfRange(field: "PMD \(strategy) key length", value: key.count) }
        self.strategy = strategy
        self.key = key
    }

    func encode() -> [UInt8] { [PMDSettingType.security.rawValue, 1, strategy.rawValue] + key }

    /// Reads what follows the type byte. The key of `xor` has no length on the wire: it is the rest of the request.
    static func decode(after reader: inout ByteReader) throws(GATTCodecError) -> PMDSecurity {
        let count = try reader.readUInt8()
        guard count == 1 else { throw .outOfRange(field: "PMD security setting count", value: Int(count)) }
        let strategyByte = try reader.readUInt8()
        guard let strategy = Strategy(rawValue: strategyByte) else {
            throw .unknownIdentifier(field: "PMD security strategy", value: Int(strategyByte))
        }
        let keyLength = switch strategy {
        case .none: 0
        case .xor: max(1, reader.remainingCount)
        case .aes128: 16
        case .aes256: 32
        }
        return try PMDSecurity(strategy: strategy, key: Array(try reader.readBytes(keyLength)))
    }
}
