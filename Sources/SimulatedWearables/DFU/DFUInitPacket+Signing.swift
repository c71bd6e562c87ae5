import Crypto
import Firmware

extension DFUInitPacket {
    /// A copy signed as nrfutil signs: ECDSA P-256 over SHA-256 of the encoded `InitCommand`, r and s each
    /// reversed. Lets the simulator and tests make signed packets; the gateway never signs nor verifies them, so
    /// swift-crypto's P-256 stays out of `wear2mqtt` (docs/decisions.md, "A binary without ICU").
    public func signed(with key: P256.Signing.PrivateKey) -> DFUInitPacket {
        var copy = self
        // Signing a digest with a valid key cannot fail; swift-crypto only declares `throws` for its backends.
        let raw = (try? key.signature(for: encodedInitCommand()).rawRepresentation).map(Array.init) ?? []
        let stored = Array(raw.prefix(32).reversed()) + Array(raw.dropFirst(32).reversed())
        copy.signature = Signature(type: .ecdsaP256SHA256, bytes: stored)
        return copy
    }
}
