import Testing

@testable import Wearables
@testable import Firmware
@testable import SimulatedWearables

/// Secure DFU bytes against the nRF5 SDK / Android-DFU-Library facts (vectors written by hand, not by the
/// encoders), then `SecureDFUClient` run against `SecureDFUTarget` in memory: whole transfers, a link drop and
/// resume, a rejected object, a corrupted packet, a rejected init packet.
@Suite("Secure DFU: codec, client and simulated bootloader")
struct SecureDFUTests {
    // MARK: Requests

    @Test("Create command of 138 bytes is 01 01 8A 00 00 00, Create data of 4096 is 01 02 00 10 00 00")
    func createRequests() throws {
        try expectRequest(.create(.command, size: 138), [0x01, 0x01, 0x8A, 0x00, 0x00, 0x00])
        try expectRequest(.create(.data, size: 4096), [0x01, 0x02, 0x00, 0x10, 0x00, 0x00])
    }

    @Test("Set PRN 12 is 02 0C 00, Calculate Checksum 03, Execute 04, Select command 06 01, Select data 06 02")
    func otherRequests() throws {
        try expectRequest(.setPacketReceiptNotification(12), [0x02, 0x0C, 0x00])
        try expectRequest(.setPacketReceiptNotification(0), [0x02, 0x00, 0x00])
        try expectRequest(.calculateChecksum, [0x03])
        try expectRequest(.execute, [0x04])
        try expectRequest(.select(.command), [0x06, 0x01])
        try expectRequest(.select(.data), [0x06, 0x02])
    }

    @Test("a request with an unknown opcode, object type or a missing parameter does not decode")
    func malformedRequests() {
        #expect(throws: GATTCodecError.unknownIdentifier(field: "opcode", value: 0x05)) {
            try SecureDFURequest(decoding: [0x05])
        }
        #expect(throws: GATTCodecError.unknownIdentifier(field: "object type", value: 3)) {
            try SecureDFURequest(decoding: [0x06, 0x03])
        }
        #expect(throws: GATTCodecError.truncated(expected: 6, actual: 5)) {
            try SecureDFURequest(decoding: [0x01, 0x02, 0x00, 0x10, 0x00])
        }
        #expect(throws: GATTCodecError.truncated(expected: 1, actual: 0)) { try SecureDFURequest(decoding: []) }
    }

    // MARK: Responses

    @Test("Select's answer 60 06 01 | 00 10 00 00 | 34 12 00 00 | 26 39 F4 CB is max 4096, offset 0x1234, CRC 0xCBF43926")
    func selectResponse() throws {
        try expectResponse(.selected(maxSize: 4096, offset: 0x1234, crc: 0xCBF4_3926),
                           [0x60, 0x06, 0x01, 0x00, 0x10, 0x00, 0x00, 0x34, 0x12, 0x00, 0x00, 0x26, 0x39, 0xF4, 0xCB])
    }

    @Test("Calculate Checksum's answer (and every receipt) 60 03 01 | 09 00 00 00 | 26 39 F4 CB is offset 9, CRC 0xCBF43926")
    func checksumResponse() throws {
        try expectResponse(.checksum(offset: 9, crc: 0xCBF4_3926),
                           [0x60, 0x03, 0x01, 0x09, 0x00, 0x00, 0x00, 0x26, 0x39, 0xF4, 0xCB])
    }

    @Test("success without payload is 60 op 01; failures carry the result, and 0x0B the extended code")
    func statusResponses() throws {
        try expectResponse(.success(.create), [0x60, 0x01, 0x01])
        try expectResponse(.success(.setPacketReceiptNotification), [0x60, 0x02, 0x01])
        try expectResponse(.success(.execute), [0x60, 0x04, 0x01])
        try expectResponse(.failure(requestOpcode: 0x01, result: .insufficientResources, extendedError: nil),
                           [0x60, 0x01, 0x04])
        try expectResponse(.failure(requestOpcode: 0x05, result: .opcodeNotSupported, extendedError: nil),
                           [0x60, 0x05, 0x02])
        try expectResponse(.failure(requestOpcode: 0x04, result: .extendedError, extendedError: .verificationFailed),
                           [0x60, 0x04, 0x0B, 0x0C])
    }

    @Test("result and extended codes have the SDK's numbers and names")
    func codeTables() {
        let results: [(SecureDFUResult, UInt8, String)] = [
            (.success, 0x01, "SUCCESS"), (.opcodeNotSupported, 0x02, "OP_CODE_NOT_SUPPORTED"),
            (.invalidParameter, 0x03, "INVALID_PARAMETER"), (.insufficientResources, 0x04, "INSUFFICIENT_RESOURCES"),
            (.invalidObject, 0x05, "INVALID_OBJECT"), (.unsupportedType, 0x07, "UNSUPPORTED_TYPE"),
            (.operationNotPermitted, 0x08, "OPERATION_NOT_PERMITTED"), (.operationFailed, 0x0A, "OPERATION_FAILED"),
            (.extendedError, 0x0B, "EXT_ERROR"),
        ]
        for (result, code, name) in results {
            #expect(result.rawValue == code)
            #expect(result.sdkName == name)
        }
        let extended: [(SecureDFUExtendedError, UInt8, String)] = [
            (.wrongCommandFormat, 0x02, "WRONG_COMMAND_FORMAT"), (.unknownCommand, 0x03, "UNKNOWN_COMMAND"),
            (.initCommandInvalid, 0x04, "INIT_COMMAND_INVALID"), (.firmwareVersionFailure, 0x05, "FW_VERSION_FAILURE"),
            (.hardwareVersionFailure, 0x06, "HW_VERSION_FAILURE"), (.softDeviceVersionFailure, 0x07, "SD_VERSION_FAILURE"),
            (.signatureMissing, 0x08, "SIGNATURE_MISSING"), (.wrongHashType, 0x09, "WRONG_HASH_TYPE"),
            (.hashFailed, 0x0A, "HASH_FAILED"), (.wrongSignatureType, 0x0B, "WRONG_SIGNATURE_TYPE"),
            (.verificationFailed, 0x0C, "VERIFICATION_FAILED"), (.insufficientSpace, 0x0D, "INSUFFICIENT_SPACE"),
        ]
        for (code, raw, name) in extended {
            #expect(code.rawValue == raw)
            #expect(code.sdkName == name)
        }
        #expect(SecureDFUResult(rawValue: 0x42).sdkName == "result 66")
    }

    @Test("a notification that is not 60 …, or a payload cut short, does not decode")
    func malformedResponses() {
        #expect(throws: GATTCodecError.unknownIdentifier(field: "response code", value: 0x10)) {
            try SecureDFUResponse(decoding: [0x10, 0x01, 0x01])
        }
        #expect(throws: GATTCodecError.truncated(expected: 15, actual: 14)) {
            try SecureDFUResponse(decoding: [0x60, 0x06, 0x01, 0, 0x10, 0, 0, 0x34, 0x12, 0, 0, 0x26, 0x39, 0xF4])
        }
        #expect(throws: GATTCodecError.truncated(expected: 4, actual: 3)) {
            try SecureDFUResponse(decoding: [0x60, 0x04, 0x0B])
        }
    }

    // MARK: UUIDs, buttonless, bootloader address, CRC-32

    @Test("UUIDs are BlueZ's lower-case 128-bit strings")
    func uuids() {
        #expect(SecureDFUUUID.service == BluetoothUUID(0xFE59).string)
        #expect(SecureDFUUUID.controlPoint == "8ec90001-f315-4f60-9fb8-838830daea50")
        #expect(SecureDFUUUID.packet == "8ec90002-f315-4f60-9fb8-838830daea50")
        #expect(SecureDFUUUID.buttonlessWithoutBonds == "8ec90003-f315-4f60-9fb8-838830daea50")
    }

    @Test("buttonless: write 01, the application indicates 20 01 01 before it resets")
    func buttonless() {
        #expect(SecureDFUButtonless.enterBootloaderRequest == [0x01])
        #expect(SecureDFUButtonless.response(to: 0x01, result: .success) == [0x20, 0x01, 0x01])
        #expect(SecureDFUButtonless.result(of: [0x20, 0x01, 0x01]) == .success)
        #expect(SecureDFUButtonless.result(of: [0x20, 0x01, 0x07]) == .notBonded)
        #expect(SecureDFUButtonless.result(of: [0x20, 0x02, 0x01]) == nil)
        #expect(SecureDFUButtonless.result(of: [0x60, 0x01, 0x01]) == nil)
    }

    @Test("the bootloader advertises under the address whose last byte is one more, wrapping without carry")
    func bootloaderAddress() {
        #expect(SecureDFUBootloaderAddress.after("C0:FF:EE:00:12:34") == "C0:FF:EE:00:12:35")
        #expect(SecureDFUBootloaderAddress.after("AA:BB:CC:DD:EE:FF") == "AA:BB:CC:DD:EE:00")
        #expect(SecureDFUBootloaderAddress.after("aa:bb:cc:dd:ee:0f") == "AA:BB:CC:DD:EE:10")
        #expect(SecureDFUBootloaderAddress.after("AA:BB:CC:DD:EE") == nil)
        #expect(SecureDFUBootloaderAddress.after("AA:BB:CC:DD:EE:GG") == nil)
        #expect(SecureDFUBootloaderAddress.after("AA:BB:CC:DD:EE:1") == nil)
    }

    @Test("CRC-32 is zlib's (check value 0xCBF43926) and incremental")
    func crc32() {
        let text = Array("123456789".utf8)
        #expect(DFUChecksum.crc32(text) == 0xCBF4_3926)
        #expect(DFUChecksum.update(DFUChecksum.crc32(text.prefix(4)), with: text.dropFirst(4)) == 0xCBF4_3926)
        #expect(DFUChecksum.crc32([UInt8]()) == 0)
    }

    @Test("vendor_code is the result, or 0x0B00 + the extended code")
    func commandErrors() {
        let plain = SecureDFUError.remote(.operationFailed, extended: nil).commandError
        #expect(plain.code == .dfuFailed && plain.vendorCode == 0x0A)
        let extended = SecureDFUError.remote(.extendedError, extended: .verificationFailed).commandError
        #expect(extended.code == .dfuFailed && extended.vendorCode == 0x0B0C)
        #expect(extended.message.contains("VERIFICATION_FAILED"))
        #expect(SecureDFUError.emptyInput("the image").commandError.vendorCode == nil)
    }

    // MARK: Client ⇄ bootloader

    @Test("a 10 kB image goes as 4096 + 4096 + 1808-byte objects with receipts every 12 packets and is installed")
    func wholeTransfer() throws {
        let image = Self.image(count: 10_000)
        var link = SecureDFULink(target: Self.bootloader())
        var client = SecureDFUClient(initPacket: Self.initPacket(for: image), firmware: image)
        #expect(link.run(&client) == .finished)
        #expect(link.target.installedImage == image)
        #expect(link.resets == 1)
        #expect(client.progress == DFUTransferProgress(acknowledgedBytes: 10_000, totalBytes: 10_000))
        #expect(link.controlWrites.prefix(5) == [
            [0x06, 0x01], [0x02, 0x00, 0x00], [0x01, 0x01, 0x8A, 0x00, 0x00, 0x00], [0x03], [0x04],
        ])
        #expect(link.controlWrites.dropFirst(5).prefix(3) == [[0x02, 0x0C, 0x00], [0x06, 0x02],
                                                              [0x01, 0x02, 0x00, 0x10, 0x00, 0x00]])
        #expect(link.dataCreates == [4096, 4096, 1808])
        // 4096 bytes are 205 packets: 17 receipts per full object, 90 packets → 7 in the last.
        #expect(link.receipts == 17 + 17 + 7)
        #expect(link.progressSeen == link.progressSeen.sorted())
    }

    @Test("with receipts off and a 244-byte packet size the same image still goes through")
    func transferWithoutReceipts() {
        let image = Self.image(count: 10_000)
        var link = SecureDFULink(target: Self.bootloader())
        var client = SecureDFUClient(initPacket: Self.initPacket(for: image), firmware: image, packetReceiptInterval: 0,
                                     packetSize: SecureDFUClient.packetSize(forATTMTU: 247))
        #expect(link.run(&client) == .finished)
        #expect(link.target.installedImage == image)
        #expect(link.receipts == 0)
        #expect(link.packetSizes.max() == 244)
    }

    @Test("a link drop at 40 % inside an object resumes from the reported offset without re-creating it")
    func resumeInsideObject() throws {
        let image = Self.image(count: 10_000)
        var link = SecureDFULink(target: Self.bootloader())
        link.target.addProgressMark(0.4)
        var first = SecureDFUClient(initPacket: Self.initPacket(for: image), firmware: image)
        #expect(link.run(&first) == .linkDropped)
        #expect(link.target.receivedImageBytes == 4000)
        #expect(link.target.installedImage == nil)

        link.startNewConnection()
        var second = SecureDFUClient(initPacket: Self.initPacket(for: image), firmware: image)
        #expect(link.run(&second) == .finished)
        #expect(link.target.installedImage == image)
        // The init packet is executed again, not re-sent (re-creating it would reset all progress).
        #expect(link.controlWrites.prefix(2) == [[0x06, 0x01], [0x04]])
        #expect(!link.controlWrites.contains([0x01, 0x01, 0x8A, 0x00, 0x00, 0x00]))
        #expect(link.dataCreates == [4096, 1808])
        #expect(link.imageBytesWritten == 6000)
        #expect(link.progressSeen.first(where: { $0 > 0 }) == 4000)
    }

    @Test("a link drop right after an object's last packet executes that object, then goes on")
    func resumeOnObjectBoundary() throws {
        let image = Self.image(count: 10_000)
        var link = SecureDFULink(target: Self.bootloader())
        link.target.addProgressMark(4096.0 / 10_000)
        var first = SecureDFUClient(initPacket: Self.initPacket(for: image), firmware: image)
        #expect(link.run(&first) == .linkDropped)
        #expect(link.target.receivedImageBytes == 4096)

        link.startNewConnection()
        var second = SecureDFUClient(initPacket: Self.initPacket(for: image), firmware: image)
        #expect(link.run(&second) == .finished)
        #expect(link.target.installedImage == image)
        #expect(link.controlWrites.prefix(5) == [[0x06, 0x01], [0x04], [0x02, 0x0C, 0x00], [0x06, 0x02], [0x04]])
        #expect(link.dataCreates == [4096, 1808])
        #expect(link.imageBytesWritten == 10_000 - 4096)
    }

    @Test("bytes the bootloader kept that are not ours are sent again from the start of their object")
    func resumeWithForeignPrefix() throws {
        let ours = Self.image(count: 10_000)
        var theirs = ours
        theirs[4200] ^= 0xFF
        var link = SecureDFULink(target: Self.bootloader())
        link.target.addProgressMark(0.45)
        // Same init packet, another byte in the second object: what a resumed transfer must not trust.
        var first = SecureDFUClient(initPacket: Self.initPacket(for: ours), firmware: theirs)
        #expect(link.run(&first) == .linkDropped)
        #expect(link.target.receivedImageBytes == 4516)

        link.startNewConnection()
        var second = SecureDFUClient(initPacket: Self.initPacket(for: ours), firmware: ours)
        #expect(link.run(&second) == .finished)
        #expect(link.target.installedImage == ours)
        // Object 0 was executed and matches; object 1 is created again, which rewinds the bootloader to 4096.
        #expect(link.dataCreates == [4096, 1808])
        #expect(link.imageBytesWritten == 10_000 - 4096)
    }

    @Test("a rejected object ends the transfer with the bootloader's result as vendor_code")
    func rejectedObject() throws {
        let image = Self.image(count: 10_000)
        var link = SecureDFULink(target: Self.bootloader())
        // The third Execute is the second data object's.
        link.beforeControlWrite = { target, bytes, executeCount in
            if bytes == [0x04], executeCount == 3 { target.rejectNextObject(result: .operationFailed) }
        }
        var client = SecureDFUClient(initPacket: Self.initPacket(for: image), firmware: image)
        let error = SecureDFUError.remote(.operationFailed, extended: nil)
        #expect(link.run(&client) == .failed(error))
        #expect(link.target.installedImage == nil)
        #expect(error.commandError.vendorCode == 0x0A)
        #expect(client.progress.acknowledgedBytes == 8192)
    }

    @Test("an image the bootloader cannot verify fails with EXT_ERROR / VERIFICATION_FAILED (vendor_code 0x0B0C)")
    func verificationFailure() throws {
        let image = Self.image(count: 10_000)
        var link = SecureDFULink(target: Self.bootloader())
        var other = image
        other[9_999] ^= 0x01
        var client = SecureDFUClient(initPacket: Self.initPacket(for: image), firmware: other)
        let error = SecureDFUError.remote(.extendedError, extended: .verificationFailed)
        #expect(link.run(&client) == .failed(error))
        #expect(link.target.installedImage == nil)
        #expect(error.commandError.vendorCode == 0x0B0C)
    }

    @Test("a byte flipped in one packet shows in the next receipt; the object is sent again and the image installed")
    func corruptedPacketRetried() throws {
        let image = Self.image(count: 10_000)
        var link = SecureDFULink(target: Self.bootloader())
        link.corruptPackets = [230]  // a packet of the second data object
        var client = SecureDFUClient(initPacket: Self.initPacket(for: image), firmware: image)
        #expect(link.run(&client) == .finished)
        #expect(link.target.installedImage == image)
        #expect(link.dataCreates == [4096, 4096, 4096, 1808])
    }

    @Test("without receipts the corruption shows in Calculate Checksum; the object is sent again")
    func corruptedPacketWithoutReceipts() throws {
        let image = Self.image(count: 10_000)
        var link = SecureDFULink(target: Self.bootloader())
        link.corruptPackets = [20]
        var client = SecureDFUClient(initPacket: Self.initPacket(for: image), firmware: image, packetReceiptInterval: 0)
        #expect(link.run(&client) == .finished)
        #expect(link.target.installedImage == image)
        #expect(link.dataCreates == [4096, 4096, 4096, 1808])
    }

    @Test("an object corrupted twice is sent a third time and installs (three attempts, as Android-DFU-Library)")
    func corruptedTwice() throws {
        let image = Self.image(count: 10_000)
        var link = SecureDFULink(target: Self.bootloader())
        // Packet 20 of the first object, then packet 20 of its second attempt: the init packet takes 7 writes and
        // each attempt stops at the receipt after 24 packets.
        link.corruptPackets = [7 + 20, 7 + 24 + 20]
        var client = SecureDFUClient(initPacket: Self.initPacket(for: image), firmware: image)
        #expect(link.run(&client) == .finished)
        #expect(link.target.installedImage == image)
        #expect(link.dataCreates == [4096, 4096, 4096, 4096, 1808], "the first object three times")
    }

    @Test("an object corrupted three times fails with its checksum mismatch")
    func corruptedThrice() throws {
        let image = Self.image(count: 10_000)
        var link = SecureDFULink(target: Self.bootloader())
        link.corruptPackets = [7 + 20, 7 + 24 + 20, 7 + 48 + 20]
        var client = SecureDFUClient(initPacket: Self.initPacket(for: image), firmware: image)
        guard case .failed(.checksumMismatch(.data, let sent, _, let reported, _)) = link.run(&client) else {
            Issue.record("expected a data checksum mismatch")
            return
        }
        #expect(sent == 480 && reported == 480)
        #expect(link.dataCreates == [4096, 4096, 4096])
        #expect(link.target.installedImage == nil)
    }

    @Test("attempts are counted per object: two damaged attempts of each object still install")
    func attemptsCountedPerObject() throws {
        let image = Self.image(count: 10_000)
        var target = Self.bootloader()
        target.corruptNextDataObjects(2)
        var link = SecureDFULink(target: target)
        var client = SecureDFUClient(initPacket: Self.initPacket(for: image), firmware: image)
        #expect(link.run(&client) == .finished)
        #expect(link.target.installedImage == image)
        #expect(link.target.dataObjectsStillToCorrupt == 0)

        var again = Self.bootloader()
        again.corruptNextDataObjects(3)
        var failing = SecureDFULink(target: again)
        var second = SecureDFUClient(initPacket: Self.initPacket(for: image), firmware: image)
        guard case .failed(.checksumMismatch(.data, _, _, _, _)) = failing.run(&second) else {
            Issue.record("three damaged attempts of one object fail")
            return
        }
    }

    @Test("INVALID_OBJECT after the last object: Execute is sent once more and the image installs")
    func busyFinalExecute() throws {
        let image = Self.image(count: 10_000)
        var target = Self.bootloader()
        target.answerFinalExecuteOnce(.invalidObject)
        var link = SecureDFULink(target: target)
        var client = SecureDFUClient(initPacket: Self.initPacket(for: image), firmware: image)
        #expect(link.run(&client) == .finished)
        #expect(link.target.installedImage == image)
        #expect(link.controlWrites.filter { $0 == [0x04] }.count == 1 + 3 + 1, "command, three objects, one repeat")
        #expect(!link.target.finalExecuteAnswerPending)
    }

    @Test("INVALID_OBJECT twice after the last object, or after an earlier one, fails with it")
    func invalidObjectNotRetriedTwiceOrEarly() throws {
        let image = Self.image(count: 10_000)
        var busy = Self.bootloader()
        busy.answerFinalExecuteOnce(.invalidObject)
        var twice = SecureDFULink(target: busy)
        // Executes: the command, three objects (the last answered INVALID_OBJECT), then the repeat, armed again.
        twice.beforeControlWrite = { target, bytes, executeCount in
            if bytes == [0x04], executeCount == 5 { target.answerFinalExecuteOnce(.invalidObject) }
        }
        var client = SecureDFUClient(initPacket: Self.initPacket(for: image), firmware: image)
        #expect(twice.run(&client) == .failed(.remote(.invalidObject, extended: nil)))
        #expect(twice.controlWrites.filter { $0 == [0x04] }.count == 5, "one repeat, no more")

        var early = Self.bootloader()
        early.rejectNextObject(result: .invalidObject)
        var link = SecureDFULink(target: early)
        var other = SecureDFUClient(initPacket: Self.initPacket(for: image), firmware: image)
        #expect(link.run(&other) == .failed(.remote(.invalidObject, extended: nil)), "not the last object: no repeat")
    }

    @Test("a corrupted init packet is created and sent once more")
    func corruptedInitPacket() throws {
        let image = Self.image(count: 10_000)
        var link = SecureDFULink(target: Self.bootloader())
        link.corruptPackets = [1]
        var client = SecureDFUClient(initPacket: Self.initPacket(for: image), firmware: image)
        #expect(link.run(&client) == .finished)
        #expect(link.controlWrites.filter { $0 == [0x01, 0x01, 0x8A, 0x00, 0x00, 0x00] }.count == 2)
        #expect(link.target.installedImage == image)
    }

    @Test("an init packet the bootloader rejects ends the transfer before any image byte")
    func initPacketRejected() throws {
        let image = Self.image(count: 10_000)
        var link = SecureDFULink(target: SecureDFUTarget { _ in .rejected(.softDeviceVersionFailure) })
        var client = SecureDFUClient(initPacket: Self.initPacket(for: image), firmware: image)
        let error = SecureDFUError.remote(.extendedError, extended: .softDeviceVersionFailure)
        #expect(link.run(&client) == .failed(error))
        #expect(link.imageBytesWritten == 0)
        #expect(link.target.installedImage == nil)
        #expect(error.commandError.vendorCode == 0x0B07)
    }

    @Test("an init packet larger than the command object fails with INSUFFICIENT_RESOURCES")
    func initPacketTooLarge() throws {
        let image = Self.image(count: 100)
        var link = SecureDFULink(target: Self.bootloader())
        var client = SecureDFUClient(initPacket: Self.initPacket(for: image) + Array(repeating: 0, count: 600),
                                     firmware: image)
        #expect(link.run(&client) == .failed(.remote(.insufficientResources, extended: nil)))
    }

    @Test("an empty image fails before anything is written")
    func emptyImage() {
        var client = SecureDFUClient(initPacket: [1, 2, 3], firmware: [])
        #expect(client.start() == [.failed(.emptyInput("the image"))])
    }

    // MARK: Bootloader checks

    @Test("the bootloader refuses objects too large, data before the init packet, and unknown requests")
    func bootloaderRefusals() {
        var target = Self.bootloader()
        #expect(target.writeControlPoint([0x01, 0x01, 0x01, 0x02, 0x00, 0x00]) == [.notify([0x60, 0x01, 0x04])])
        #expect(target.writeControlPoint([0x01, 0x01, 0x00, 0x00, 0x00, 0x00]) == [.notify([0x60, 0x01, 0x03])])
        #expect(target.writeControlPoint([0x01, 0x02, 0x00, 0x10, 0x00, 0x00]) == [.notify([0x60, 0x01, 0x08])])
        #expect(target.writeControlPoint([0x05]) == [.notify([0x60, 0x05, 0x02])])
        #expect(target.writeControlPoint([0x06, 0x03]) == [.notify([0x60, 0x06, 0x05])])
        #expect(target.writeControlPoint([0x01, 0x02, 0x00]) == [.notify([0x60, 0x01, 0x03])])
        // Executing a command object that has not received its size.
        #expect(target.writeControlPoint([0x01, 0x01, 0x10, 0x00, 0x00, 0x00]) == [.notify([0x60, 0x01, 0x01])])
        #expect(target.writeControlPoint([0x04]) == [.notify([0x60, 0x04, 0x08])])
    }

    @Test("data objects: over 4096 bytes, unaligned unless last, past the image; extra bytes are dropped")
    func bootloaderDataChecks() {
        let image = Self.image(count: 5000)
        var target = Self.bootloader()
        Self.sendInitPacket(Self.initPacket(for: image), to: &target)
        #expect(target.writeControlPoint([0x01, 0x02, 0x00, 0x20, 0x00, 0x00]) == [.notify([0x60, 0x01, 0x04])])
        #expect(target.writeControlPoint([0x01, 0x02, 0x00, 0x08, 0x00, 0x00]) == [.notify([0x60, 0x01, 0x03])])
        #expect(target.writeControlPoint([0x01, 0x02, 0x00, 0x10, 0x00, 0x00]) == [.notify([0x60, 0x01, 0x01])])
        _ = target.writePacket(Array(image[0..<4096]))
        #expect(target.writePacket([0xAA]).isEmpty)  // beyond the object: dropped, receipts are off
        #expect(target.receivedImageBytes == 4096)
        #expect(target.writeControlPoint([0x04]) == [.notify([0x60, 0x04, 0x01])])
        // 904 bytes are the image's last object; 4096 more would overflow the announced 5000.
        #expect(target.writeControlPoint([0x01, 0x02, 0x00, 0x10, 0x00, 0x00]) == [.notify([0x60, 0x01, 0x08])])
        #expect(target.writeControlPoint([0x01, 0x02, 0x88, 0x03, 0x00, 0x00]) == [.notify([0x60, 0x01, 0x01])])
        _ = target.writePacket(Array(image[4096..<4500]))
        #expect(target.writeControlPoint([0x04]) == [.notify([0x60, 0x04, 0x08])])  // object incomplete
    }

    @Test("a receipt reports a dropped packet's error instead of the checksum")
    func receiptCarriesWriteError() {
        let image = Self.image(count: 100)
        var target = Self.bootloader()
        Self.sendInitPacket(Self.initPacket(for: image), to: &target)
        #expect(target.writeControlPoint([0x02, 0x02, 0x00]) == [.notify([0x60, 0x02, 0x01])])
        #expect(target.writeControlPoint([0x01, 0x02, 0x64, 0x00, 0x00, 0x00]) == [.notify([0x60, 0x01, 0x01])])
        #expect(target.writePacket(Array(image[0..<100])).isEmpty)
        #expect(target.writePacket([0x00]) == [.notify([0x60, 0x03, 0x03])])
    }

    @Test("Select reports what survives a link drop: offset and CRC-32 of the received image")
    func selectAfterDrop() throws {
        let image = Self.image(count: 5000)
        var target = Self.bootloader()
        Self.sendInitPacket(Self.initPacket(for: image), to: &target)
        _ = target.writeControlPoint([0x01, 0x02, 0x00, 0x10, 0x00, 0x00])
        _ = target.writePacket(Array(image[0..<1000]))
        let answer = try #require(target.writeControlPoint([0x06, 0x02]).first)
        #expect(answer == .notify(SecureDFUResponse.selected(maxSize: 4096, offset: 1000,
                                                            crc: DFUChecksum.crc32(image[0..<1000])).encoded()))
    }

    // MARK: Fixtures

    static func image(count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
    }

    /// A stand-in init packet for these tests: "INIT", the image size u32 and its CRC-32 u32, padded to 138
    /// bytes (the size of a real signed application `.dat`). The real parser is wired in by the simulator.
    static func initPacket(for image: [UInt8]) -> [UInt8] {
        var writer = ByteWriter()
        writer.write(contentsOf: Array("INIT".utf8))
        writer.write(UInt32(image.count))
        writer.write(DFUChecksum.crc32(image))
        return writer.bytes + Array(repeating: 0xA5, count: 138 - writer.bytes.count)
    }

    static func bootloader(verify: Bool = true) -> SecureDFUTarget {
        SecureDFUTarget { initPacket in
            guard initPacket.count >= 12, Array(initPacket.prefix(4)) == Array("INIT".utf8) else {
                return .rejected(.initCommandInvalid)
            }
            var reader = ByteReader(Array(initPacket.dropFirst(4)))
            guard let size = try? reader.read(UInt32.self), let crc = try? reader.read(UInt32.self) else {
                return .rejected(.initCommandInvalid)
            }
            return .accepted(imageSize: Int(size)) { image in !verify || DFUChecksum.crc32(image) == crc }
        }
    }

    static func sendInitPacket(_ initPacket: [UInt8], to target: inout SecureDFUTarget) {
        _ = target.writeControlPoint(SecureDFURequest.create(.command, size: UInt32(initPacket.count)).encoded())
        _ = target.writePacket(initPacket)
        _ = target.writeControlPoint([0x04])
    }

    private func expectRequest(_ request: SecureDFURequest, _ bytes: [UInt8],
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(request.encoded() == bytes, sourceLocation: sourceLocation)
        #expect(try SecureDFURequest(decoding: bytes) == request, sourceLocation: sourceLocation)
    }

    private func expectResponse(_ response: SecureDFUResponse, _ bytes: [UInt8],
                                sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(response.encoded() == bytes, sourceLocation: sourceLocation)
        #expect(try SecureDFUResponse(decoding: bytes) == response, sourceLocation: sourceLocation)
    }
}

/// Carries a client's actions to a bootloader and its notifications back, in order, with no clock: the in-memory
/// stand-in for BlueZ and the simulator. It drops the link when the target reports a progress mark, and can
/// corrupt chosen packet writes (counted from 0 across the connection, init packet included).
struct SecureDFULink {
    enum Ending: Equatable {
        case finished
        case failed(SecureDFUError)
        case linkDropped
        /// The client waited with nothing to come, or acted after finishing: a bug either side.
        case stalled
    }

    var target: SecureDFUTarget
    var corruptPackets: Set<Int> = []
    var beforeControlWrite: ((inout SecureDFUTarget, [UInt8], Int) -> Void)?

    private(set) var controlWrites: [[UInt8]] = []
    private(set) var packetSizes: [Int] = []
    private(set) var imageBytesWritten = 0
    private(set) var dataCreates: [Int] = []
    private(set) var receipts = 0
    private(set) var resets = 0
    private(set) var progressSeen: [Int] = []
    private var executeCount = 0
    private var packetIndex = 0
    private var inDataObject = false

    init(target: SecureDFUTarget) { self.target = target }

    /// A new connection to the same bootloader: counters start again, the bootloader's state stays.
    mutating func startNewConnection() {
        controlWrites = []
        packetSizes = []
        imageBytesWritten = 0
        dataCreates = []
        receipts = 0
        progressSeen = []
        executeCount = 0
        packetIndex = 0
        inDataObject = false
    }

    mutating func run(_ client: inout SecureDFUClient) -> Ending {
        var notifications: [[UInt8]] = []
        var actions = client.start()
        while true {
            var waiting = false
            for (index, action) in actions.enumerated() {
                switch action {
                case .writeControl(let bytes):
                    controlWrites.append(bytes)
                    if bytes == [0x04] { executeCount += 1 }
                    if let request = try? SecureDFURequest(decoding: bytes) {
                        switch request {
                        case .create(.data, let size): dataCreates.append(Int(size)); inDataObject = true
                        case .create(.command, _), .select(.command): inDataObject = false
                        case .select(.data): inDataObject = true
                        default: break
                        }
                    }
                    beforeControlWrite?(&target, bytes, executeCount)
                    for output in target.writeControlPoint(bytes) {
                        if case .notify(let value) = output { notifications.append(value) }
                        if output == .reset { resets += 1 }
                    }
                case .writePacket(var bytes):
                    if corruptPackets.contains(packetIndex) { bytes[bytes.count / 2] ^= 0x40 }
                    packetIndex += 1
                    packetSizes.append(bytes.count)
                    if inDataObject { imageBytesWritten += bytes.count }
                    for output in target.writePacket(bytes) {
                        switch output {
                        case .notify(let value):
                            notifications.append(value)
                            receipts += 1
                        case .passedProgressMark: return .linkDropped
                        case .reset: resets += 1
                        }
                    }
                case .waitForNotification:
                    guard index == actions.count - 1, !notifications.isEmpty else { return .stalled }
                    waiting = true
                case .finished:
                    return notifications.isEmpty && index == actions.count - 1 ? .finished : .stalled
                case .failed(let error):
                    return .failed(error)
                }
            }
            guard waiting else { return .stalled }
            actions = client.handle(.notification(notifications.removeFirst()))
            progressSeen.append(client.progress.acknowledgedBytes)
        }
    }
}
