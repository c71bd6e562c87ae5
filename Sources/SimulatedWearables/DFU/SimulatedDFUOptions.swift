import Wearables
import Firmware

/// The Nordic DFU options of a simulated nRF5 device, read from its scenario options:
///
/// - `dfu`: `secure` (default: the application offers the buttonless 0xFE59 service and reboots into a Secure DFU
///   bootloader), `legacy` (the application offers Legacy DFU 0x1530 and reboots into a Legacy bootloader), or
///   `none` (no DFU service at all).
/// - `dfu_drop_at`: 0 (never) or a fraction of the image, 0 < f ≤ 1: the bootloader drops the link once when the
///   image it received passes that fraction, and keeps advertising, so a central reconnects (and, with Secure DFU,
///   resumes).
/// - `dfu_reject`: 0 (never) or the code the first Execute of a data object (Secure) or the first Validate
///   (Legacy) answers instead, once. Secure: a result 2…0x0B, or 0x0B00 + an extended error (0x0B0C is
///   `VERIFICATION_FAILED`), the encoding the gateway reports as `vendor_code`. Legacy: a status 2…255.
/// - `dfu_execute_busy` (Secure): true makes the Execute that completes an image answer `INVALID_OBJECT` once, as a
///   bootloader whose SoftDevice is still erasing; executed again, it succeeds.
/// - `dfu_corrupt_objects` (Secure): 0 (never) to 5 — that many data objects in a row, from the first one created,
///   arrive with a damaged byte, so their checksum disagrees (2 makes the first object need its third attempt).
/// - `dfu_legacy_bootloader` (Legacy): `sdk11` (default) or `sdk6`, a bootloader older than SDK 7 that speaks only
///   DFU v1 and has no version characteristic (`LegacyDFUTarget.Configuration.speaksDFUVersion1`).
///
/// The faults fire once per simulation, not once per transfer, so a central that tries again succeeds.
public struct SimulatedDFUOptions: Sendable, Equatable {
    public enum Variant: String, Sendable, CaseIterable {
        case secure
        case legacy
        case none
    }

    /// Which Legacy bootloader the device has.
    public enum LegacyBootloader: String, Sendable, CaseIterable {
        case sdk11
        /// Older than SDK 7: DFU v1 only.
        case sdk6
    }

    public var variant: Variant
    public var faults: SimulatedDFUFaults
    public var legacyBootloader: LegacyBootloader

    public init(variant: Variant = .secure, faults: SimulatedDFUFaults = SimulatedDFUFaults(),
                legacyBootloader: LegacyBootloader = .sdk11) {
        self.variant = variant
        self.faults = faults
        self.legacyBootloader = legacyBootloader
    }

    public init(reading options: inout SimulationOptionReader) throws(SimulatedDeviceConfigurationError) {
        let name = try options.string("dfu", default: Variant.secure.rawValue, allowed: Variant.allCases.map(\.rawValue))
        variant = Variant(rawValue: name) ?? .secure
        let dropAt = try options.double("dfu_drop_at", default: 0, in: 0...1)
        let reject = try options.int("dfu_reject", default: 0, in: 0...0x0BFF)
        let executeBusy = try options.bool("dfu_execute_busy", default: false)
        let corruptObjects = try options.int("dfu_corrupt_objects", default: 0, in: 0...5)
        let bootloader = try options.string("dfu_legacy_bootloader", default: LegacyBootloader.sdk11.rawValue,
                                            allowed: LegacyBootloader.allCases.map(\.rawValue))
        legacyBootloader = LegacyBootloader(rawValue: bootloader) ?? .sdk11
        faults = SimulatedDFUFaults(dropAt: dropAt > 0 ? dropAt : nil, reject: reject > 0 ? reject : nil,
                                    executeBusy: executeBusy, corruptObjects: corruptObjects)
        if variant == .none {
            if faults.dropAt != nil { throw .invalidOption(key: "dfu_drop_at", reason: "needs dfu: secure or legacy") }
            if faults.reject != nil { throw .invalidOption(key: "dfu_reject", reason: "needs dfu: secure or legacy") }
        }
        if variant != .secure {
            if executeBusy { throw .invalidOption(key: "dfu_execute_busy", reason: "needs dfu: secure") }
            if corruptObjects > 0 { throw .invalidOption(key: "dfu_corrupt_objects", reason: "needs dfu: secure") }
        }
        if variant != .legacy, legacyBootloader != .sdk11 {
            throw .invalidOption(key: "dfu_legacy_bootloader", reason: "needs dfu: legacy")
        }
        if let reject = faults.reject, !Self.isValid(reject: reject, for: variant) {
            throw .invalidOption(key: "dfu_reject", reason: variant == .legacy
                ? "a Legacy DFU status is 2…255, got \(reject)"
                : "a Secure DFU result is 2…11, or 0x0B00 (2816) + an extended error, got \(reject)")
        }
    }

    static func isValid(reject code: Int, for variant: Variant) -> Bool {
        switch variant {
        case .secure: (2...0x0B).contains(code) || (0x0B00...0x0BFF).contains(code)
        case .legacy: (2...0xFF).contains(code)
        case .none: false
        }
    }
}

/// The faults still to inject; each is cleared once it fired.
public struct SimulatedDFUFaults: Sendable, Equatable {
    /// The fraction of the image at which the bootloader drops the link.
    public var dropAt: Double?
    /// The code the first data Execute (Secure) or Validate (Legacy) answers.
    public var reject: Int?
    /// Secure: the Execute completing an image answers `INVALID_OBJECT` once.
    public var executeBusy: Bool
    /// Secure: data objects in a row, from the first created, received with a damaged byte.
    public var corruptObjects: Int

    public init(dropAt: Double? = nil, reject: Int? = nil, executeBusy: Bool = false, corruptObjects: Int = 0) {
        self.dropAt = dropAt
        self.reject = reject
        self.executeBusy = executeBusy
        self.corruptObjects = corruptObjects
    }

    /// `reject` as a Secure DFU answer: a plain result, or `extendedError` with the code below 0x0B00's.
    static func secureRejection(_ code: Int) -> (result: SecureDFUResult, extended: SecureDFUExtendedError?) {
        code >= 0x0B00
            ? (.extendedError, SecureDFUExtendedError(rawValue: UInt8(truncatingIfNeeded: code - 0x0B00)))
            : (SecureDFUResult(rawValue: UInt8(truncatingIfNeeded: code)), nil)
    }
}
