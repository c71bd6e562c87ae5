import Foundation
import MQTT

/// Nordic DFU packages made by tools nobody here wrote, from small Intel HEX images a test gives: Adafruit's fork of
/// nrfutil 0.5 (`adafruit-nrfutil dfu genpkg`: Legacy DFU packages, `sd_size` / `bl_size` in the manifest entry,
/// Legacy init packets) and Nordic's nrfutil 6.1.7 (`nrfutil pkg generate`: Secure DFU packages, sizes in
/// `info_read_only_metadata`, protobuf init packets, signed with `nrfutil keys generate` keys).
///
/// Both come from PyPI, in the venvs of `TestTools` (`deploy/prerequisites suite` installs them; Nordic's without its
/// BLE driver's native part, which package generation does not use). A missing tool is an error that says how to
/// install it, so a test that needs it fails rather than passing without it.
public enum NordicPackageTools {
    /// Where nrfutil and adafruit-nrfutil put the images (nRF52 addresses): the SoftDevice right after the MBR,
    /// an application above it, the bootloader near the end of flash.
    public static let softDeviceAddress: UInt32 = 0x1000
    public static let applicationAddress: UInt32 = 0x1F000
    public static let bootloaderAddress: UInt32 = 0x78000

    public struct ToolError: Error, CustomStringConvertible {
        public let description: String
    }

    /// `bytes` at `address` as an Intel HEX file: an extended linear address record per 64 KiB, 16-byte data
    /// records, the end-of-file record.
    public static func intelHex(_ bytes: [UInt8], at address: UInt32) -> String {
        var lines: [String] = []
        func record(_ type: UInt8, _ offset: UInt16, _ payload: [UInt8]) {
            let fields = [UInt8(payload.count), UInt8(offset >> 8), UInt8(offset & 0xFF), type] + payload
            let checksum = UInt8(truncatingIfNeeded: 0x100 - Int(fields.reduce(0) { $0 &+ $1 }))
            lines.append(":" + (fields + [checksum]).map { String(format: "%02X", $0) }.joined())
        }
        var segment: UInt32?
        for start in stride(from: 0, to: bytes.count, by: 16) {
            let at = address + UInt32(start)
            if at >> 16 != segment {
                segment = at >> 16
                record(0x04, 0, [UInt8(at >> 24), UInt8(at >> 16 & 0xFF)])
            }
            record(0x00, UInt16(at & 0xFFFF), Array(bytes[start..<min(start + 16, bytes.count)]))
        }
        record(0x01, 0, [])
        return lines.joined(separator: "\n") + "\n"
    }

    /// `adafruit-nrfutil dfu genpkg` for the given images (a SoftDevice and bootloader together become `sd_bl.bin`);
    /// `deviceType` is `--dev-type` (InfiniTime's build passes 0x0052).
    public static func adafruitPackage(application: [UInt8]? = nil, applicationVersion: UInt32? = nil,
                                       softDevice: [UInt8]? = nil, bootloader: [UInt8]? = nil,
                                       deviceType: UInt16? = nil) async throws -> [UInt8] {
        let folder = try TemporaryDirectory(prefix: "wear2mqtt-adafruit-nrfutil")
        defer { folder.remove() }
        let adafruitNrfutil = try TestTools.require(TestTools.adafruitNrfutil)
        var arguments = ["dfu", "genpkg"]
        arguments += try hexArguments(folder, application: application, softDevice: softDevice, bootloader: bootloader)
        if let applicationVersion { arguments += ["--application-version", String(applicationVersion)] }
        if let deviceType { arguments += ["--dev-type", "0x" + String(deviceType, radix: 16)] }
        try await run(adafruitNrfutil, arguments + [folder.file("package.zip")], in: folder)
        return try read(folder.file("package.zip"))
    }

    /// `nrfutil pkg generate` (Nordic's, 6.1.7) for the given images, for any SoftDevice (`--sd-req 0xFFFE`) and
    /// hardware version 52; `signed` signs with a key `nrfutil keys generate` makes for the occasion.
    public static func nordicPackage(application: [UInt8]? = nil, applicationVersion: UInt32? = nil,
                                     softDevice: [UInt8]? = nil, bootloader: [UInt8]? = nil,
                                     bootloaderVersion: UInt32 = 1, signed: Bool = false) async throws -> [UInt8] {
        let nordicNrfutil = try TestTools.require(TestTools.nordicNrfutil)
        let folder = try TemporaryDirectory(prefix: "wear2mqtt-nrfutil")
        defer { folder.remove() }
        var arguments = ["pkg", "generate", "--hw-version", "52", "--sd-req", "0xFFFE"]
        arguments += try hexArguments(folder, application: application, softDevice: softDevice, bootloader: bootloader)
        if let applicationVersion { arguments += ["--application-version", String(applicationVersion)] }
        if bootloader != nil { arguments += ["--bootloader-version", String(bootloaderVersion)] }
        // A SoftDevice with an application: the application's requirement after the update (any, here).
        if softDevice != nil, application != nil { arguments += ["--sd-id", "0xFFFE"] }
        if signed {
            try await run(nordicNrfutil, ["keys", "generate", folder.file("key.pem")], in: folder)
            arguments += ["--key-file", folder.file("key.pem")]
        }
        try await run(nordicNrfutil, arguments + [folder.file("package.zip")], in: folder)
        return try read(folder.file("package.zip"))
    }

    private static func hexArguments(_ folder: TemporaryDirectory, application: [UInt8]?, softDevice: [UInt8]?,
                                      bootloader: [UInt8]?) throws -> [String] {
        var arguments: [String] = []
        for (option, name, bytes, address) in [
            ("--application", "app", application, applicationAddress), ("--softdevice", "sd", softDevice, softDeviceAddress),
            ("--bootloader", "bl", bootloader, bootloaderAddress),
        ] {
            guard let bytes else { continue }
            arguments += [option, try folder.write("\(name).hex", intelHex(bytes, at: address))]
        }
        return arguments
    }

    /// Runs a tool to its end without holding a thread: the tests that call it run on the cooperative pool, which
    /// has one thread per core, and a blocked one stalls every other test's tasks (`waitUntilExit` would).
    private static func run(_ executable: String, _ arguments: [String], in folder: TemporaryDirectory) async throws {
        let output = folder.file("tool-output.txt")
        // A ChildProcess (posix_spawn), not Foundation's `Process`, which LeakSanitizer shows leaking itself, its file
        // handles and run-loop source on every run; the tool runs in `folder` through `sh`'s `cd`.
        let child = try ChildProcess(executable: "/bin/sh",
                                     arguments: ["-c", #"cd "$1" && shift && exec "$@""#, "sh", folder.path, executable] + arguments,
                                     outputPath: output, errorPath: output + ".err")
        guard let status = await child.waitForExit(timeout: .seconds(300)) else {
            _ = kill(child.pid, SIGKILL)
            _ = await child.waitForExit(timeout: .seconds(5))
            throw ToolError(description: "\(executable) did not finish in 300 s")
        }
        let text = (readWholeTextFile(atPath: output) ?? "") + (readWholeTextFile(atPath: output + ".err") ?? "")
        guard status == 0 else {
            throw ToolError(description: "\(([executable] + arguments).joined(separator: " ")) failed "
                            + "(\(status)):\n\(text)")
        }
    }

    private static func read(_ path: String) throws -> [UInt8] {
        guard let bytes = readWholeFile(atPath: path) else { throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: path]) }
        return bytes
    }
}
