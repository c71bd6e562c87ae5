import Testing

@testable import Wearables

/// `request/recording` read into an `H10RecordingCommand`, and the strap's PSFTP codes as the contract's errors:
/// pure, so every rule is checked here on its own; the gateway tests drive the same rules through MQTT.
@Suite("Polar H10 recording commands")
struct PolarRecordingCommandTests {
    func command(_ arguments: [String: DeviceValue]) throws(CommandError) -> H10RecordingCommand {
        try H10RecordingCommand(RequestReader(arguments))
    }

    @Test("each action with its fields; start defaults to heart rate at 1 s; 5.0 counts as 5")
    func actions() throws {
        #expect(try command(["action": "start", "identifier": "run1"]) == .start(identifier: "run1", sampleType: .heartRate, interval: .oneSecond))
        #expect(try command(["action": "start", "identifier": "r", "sample_type": "rr", "interval_s": .number(5.0)])
            == .start(identifier: "r", sampleType: .rrInterval, interval: .fiveSeconds))
        #expect(try command(["action": "stop"]) == .stop)
        #expect(try command(["action": "status"]) == .status)
        #expect(try command(["action": "list"]) == .list)
        #expect(try command(["action": "fetch", "identifier": "run1"]) == .fetch(identifier: "run1"))
        #expect(try command(["action": "remove", "identifier": "run1"]) == .remove(identifier: "run1"))
        #expect(H10RecordingCommand.path(of: "run1") == "/run1/SAMPLES.BPB")
        // 64 UTF-16 units, as the SDK's @Size counts them: 32 emoji of two units each fit, 33 do not.
        #expect(try command(["action": "fetch", "identifier": .text(String(repeating: "😀", count: 32))]) != .list)
        #expect(throws: CommandError.self) { try command(["action": "fetch", "identifier": .text(String(repeating: "😀", count: 33))]) }
    }

    @Test("refusals name the field and what was sent", arguments: [
        (["action": "start", "identifier": "a\u{7}b"], "identifier must be 1 to 64 characters"),
        (["action": "start", "identifier": "."], "identifier must be 1 to 64 characters"),
        (["action": "start", "identifier": "a", "interval_s": 0], "interval_s must be 1 or 5 (seconds), got 0"),
        (["action": "start", "identifier": "a", "interval_s": 1.5], "interval_s must be 1 or 5 (seconds), got 1.5"),
        (["action": "start", "identifier": "a", "sample_type": .null], "sample_type must be one of"),
        (["action": "list", "identifier": "a"], #"unknown field "identifier" for recording list, which accepts action"#),
        (["action": .list([])], "action must be one of"),
    ] as [([String: DeviceValue], String)])
    func refusals(arguments: [String: DeviceValue], message: String) {
        #expect(throws: CommandError.self) { try command(arguments) }
        do { _ = try command(arguments) } catch {
            #expect(error.code == .invalidValue && error.message.hasPrefix(message), "\(error)")
        }
    }

    @Test("PSFTP codes: unknown paths and bad parameters INVALID_VALUE, states BUSY, unknown commands NOT_SUPPORTED, the rest INTERNAL")
    func psftpCodes() {
        let expected: [(UInt16, CommandError.Code)] = [
            (103, .invalidValue), (102, .invalidValue), (105, .invalidValue), (101, .notSupported), (201, .notSupported),
            (202, .busy), (106, .busy), (2, .busy), (209, .busy), (205, .internalError), (200, .internalError), (303, .internalError),
        ]
        for (code, contract) in expected {
            let error = CommandError(psftpError: PSFTPErrorCode(rawValue: code), request: "recording fetch")
            #expect(error.code == contract && error.vendorCode == Int(code), "\(code)")
        }
        #expect(CommandError(psftpError: .noSuchFileOrDirectory, request: "recording fetch").message
            == "the device refused recording fetch: NO_SUCH_FILE_OR_DIRECTORY (103)")
        #expect(CommandError(psftpError: PSFTPErrorCode(rawValue: 303), request: "x").message == "the device refused x: PSFTP error 303")
    }
}
