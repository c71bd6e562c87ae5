import Testing

@testable import Wearables
@testable import Firmware
@testable import SimulatedWearables

/// Legacy DFU bytes against the SDK 11 / Android-DFU-Library facts (vectors written by hand), then
/// `LegacyDFUClient` run against `LegacyDFUTarget` in memory.
@Suite("Legacy DFU: codec, client and simulated bootloader")
struct LegacyDFUTests {
    // MARK: Bytes

    @Test("requests: Start app 01 04, Init 02 00 / 02 01, Receive 03, Validate 04, Activate 05, Reset 06, PRN 12 08 0C 00")
    func requests() throws {
        let vectors: [(LegacyDFURequest, [UInt8])] = [
            (.start(.application), [0x01, 0x04]),
            (.start([.softDevice, .bootloader]), [0x01, 0x03]),
            (.initParameters(complete: false), [0x02, 0x00]),
            (.initParameters(complete: true), [0x02, 0x01]),
            (.receiveFirmware, [0x03]),
            (.validate, [0x04]),
            (.activateAndReset, [0x05]),
            (.reset, [0x06]),
            (.reportReceivedImageSize, [0x07]),
            (.packetReceiptNotificationRequest(12), [0x08, 0x0C, 0x00]),
        ]
        for (request, bytes) in vectors {
            #expect(request.encoded() == bytes)
            #expect(try LegacyDFURequest(decoding: bytes) == request)
        }
        #expect(throws: GATTCodecError.unknownIdentifier(field: "opcode", value: 0x09)) {
            try LegacyDFURequest(decoding: [0x09])
        }
        #expect(throws: GATTCodecError.outOfRange(field: "init parameters", value: 2)) {
            try LegacyDFURequest(decoding: [0x02, 0x02])
        }
        #expect(throws: GATTCodecError.truncated(expected: 3, actual: 2)) {
            try LegacyDFURequest(decoding: [0x08, 0x0C])
        }
    }

    @Test("the sizes after Start are SoftDevice, bootloader, application u32 LE: 10240-byte app is 0…0 00 28 00 00")
    func imageSizes() throws {
        let sizes = LegacyDFUImageSizes(application: 10_240)
        let bytes: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x28, 0x00, 0x00]
        #expect(sizes.encoded() == bytes)
        #expect(try LegacyDFUImageSizes(decoding: bytes) == sizes)
        #expect(throws: GATTCodecError.truncated(expected: 8, actual: 4)) {
            try LegacyDFUImageSizes(decoding: [0, 0x28, 0, 0])
        }
    }

    @Test("notifications: 10 01 01 success, 10 04 05 CRC error, 11 F0 00 00 00 receipt of 240 bytes, 10 07 01 size")
    func notifications() throws {
        let vectors: [(LegacyDFUNotification, [UInt8])] = [
            (.response(requestOpcode: 0x01, status: .success), [0x10, 0x01, 0x01]),
            (.response(requestOpcode: 0x04, status: .crcError), [0x10, 0x04, 0x05]),
            (.response(requestOpcode: 0x01, status: .dataSizeExceedsLimit), [0x10, 0x01, 0x04]),
            (.packetReceipt(bytesReceived: 240), [0x11, 0xF0, 0x00, 0x00, 0x00]),
            (.receivedImageSize(10_240), [0x10, 0x07, 0x01, 0x00, 0x28, 0x00, 0x00]),
        ]
        for (notification, bytes) in vectors {
            #expect(notification.encoded() == bytes)
            #expect(try LegacyDFUNotification(decoding: bytes) == notification)
        }
        #expect(throws: GATTCodecError.unknownIdentifier(field: "response code", value: 0x60)) {
            try LegacyDFUNotification(decoding: [0x60, 0x01, 0x01])
        }
        #expect(throws: GATTCodecError.truncated(expected: 5, actual: 3)) {
            try LegacyDFUNotification(decoding: [0x11, 0xF0, 0x00])
        }
    }

    @Test("status codes 1…6 have the SDK's names")
    func statuses() {
        let statuses: [(LegacyDFUStatus, UInt8, String)] = [
            (.success, 1, "SUCCESS"), (.invalidState, 2, "INVALID_STATE"), (.notSupported, 3, "NOT_SUPPORTED"),
            (.dataSizeExceedsLimit, 4, "DATA_SIZE"), (.crcError, 5, "CRC_ERROR"), (.operationFailed, 6, "OPER_FAILED"),
        ]
        for (status, raw, name) in statuses {
            #expect(status.rawValue == raw)
            #expect(status.sdkName == name)
        }
    }

    @Test("init packet: type, revision, app version, SoftDevice list, CRC-16 — 52 00 01 00 02 00 00 00 02 00 81 00 88 00 B1 29")
    func initPacket() throws {
        let packet = LegacyDFUInitPacket(deviceType: 0x0052, deviceRevision: 0x0001, applicationVersion: 2,
                                         softDevices: [0x0081, 0x0088], imageCRC16: 0x29B1)
        let bytes: [UInt8] = [0x52, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x00, 0x81, 0x00, 0x88, 0x00,
                              0xB1, 0x29]
        #expect(packet.encoded() == bytes)
        #expect(try LegacyDFUInitPacket(decoding: bytes) == packet)
        #expect(try LegacyDFUInitPacket(decoding: bytes + [0, 0]) == packet)
        #expect(throws: GATTCodecError.truncated(expected: 16, actual: 15)) {
            try LegacyDFUInitPacket(decoding: Array(bytes.dropLast()))
        }
    }

    @Test("the image CRC is CRC-16/CCITT-FALSE: check value 0x29B1")
    func imageCRC() {
        #expect(LegacyDFUImageCRC.checksum(Array("123456789".utf8)) == 0x29B1)
        #expect(LegacyDFUInitPacket(for: Array("123456789".utf8)).imageCRC16 == 0x29B1)
    }

    @Test("UUIDs and the version characteristic (08 00 is 0.8)")
    func uuidsAndVersion() throws {
        #expect(LegacyDFUUUID.service == "00001530-1212-efde-1523-785feabcd123")
        #expect(LegacyDFUUUID.controlPoint == "00001531-1212-efde-1523-785feabcd123")
        #expect(LegacyDFUUUID.packet == "00001532-1212-efde-1523-785feabcd123")
        #expect(LegacyDFUUUID.version == "00001534-1212-efde-1523-785feabcd123")
        #expect(try LegacyDFUVersion(decoding: [0x08, 0x00]) == LegacyDFUVersion(major: 0, minor: 8))
        #expect(LegacyDFUTarget().versionValue == [0x08, 0x00])
    }

    // MARK: Client ⇄ bootloader

    @Test("a 10 kB application goes through with a receipt every 12 packets, passes the CRC-16 check and is installed")
    func wholeTransfer() {
        let image = Self.image(count: 10_240)
        var link = LegacyDFULink(target: LegacyDFUTarget())
        var client = LegacyDFUClient(initPacket: LegacyDFUInitPacket(for: image).encoded(), firmware: image)
        #expect(link.run(&client) == .finished)
        #expect(link.target.installedImage == image)
        #expect(link.resets == 1)
        #expect(link.controlWrites == [[0x01, 0x04], [0x02, 0x00], [0x02, 0x01], [0x08, 0x0C, 0x00], [0x03], [0x04],
                                       [0x05]])
        #expect(link.packetWrites.first == LegacyDFUImageSizes(application: 10_240).encoded())
        // 512 packets; the last is answered instead of counted: 504 / 12.
        #expect(link.receipts == 42)
        #expect(client.progress == DFUTransferProgress(acknowledgedBytes: 10_240, totalBytes: 10_240))
    }

    @Test("an image whose CRC-16 is not the init packet's fails Validate with CRC_ERROR, and the client resets")
    func crcMismatch() {
        let image = Self.image(count: 10_240)
        var tampered = image
        tampered[5_000] ^= 0x01
        var link = LegacyDFULink(target: LegacyDFUTarget())
        var client = LegacyDFUClient(initPacket: LegacyDFUInitPacket(for: image).encoded(), firmware: tampered)
        let error = LegacyDFUError.remote(.crcError, request: .validate)
        #expect(link.run(&client) == .failed(error))
        #expect(link.controlWrites.suffix(2) == [[0x04], [0x06]])
        #expect(link.target.installedImage == nil)
        #expect(error.commandError.code == .dfuFailed && error.commandError.vendorCode == 5)
    }

    @Test("an image larger than the bank is refused at Start with DATA_SIZE")
    func imageTooLarge() {
        let image = Self.image(count: 10_240)
        var configuration = LegacyDFUTarget.Configuration()
        configuration.maxImageSize = 8192
        var link = LegacyDFULink(target: LegacyDFUTarget(configuration: configuration))
        var client = LegacyDFUClient(initPacket: LegacyDFUInitPacket(for: image).encoded(), firmware: image)
        #expect(link.run(&client) == .failed(.remote(.dataSizeExceedsLimit, request: .start)))
        #expect(link.controlWrites == [[0x01, 0x04], [0x06]])
    }

    @Test("an image size that is not a multiple of 4 is NOT_SUPPORTED")
    func unalignedImageSize() {
        let image = Self.image(count: 10_242)
        var link = LegacyDFULink(target: LegacyDFUTarget())
        var client = LegacyDFUClient(initPacket: LegacyDFUInitPacket(for: image).encoded(), firmware: image)
        #expect(link.run(&client) == .failed(.remote(.notSupported, request: .start)))
    }

    @Test("an init packet for another device type or SoftDevice fails with OPER_FAILED before any image byte")
    func initPacketRejected() {
        let image = Self.image(count: 1024)
        var configuration = LegacyDFUTarget.Configuration()
        configuration.deviceType = 0x0052
        for initPacket in [LegacyDFUInitPacket(for: image, deviceType: 0x0053),
                           LegacyDFUInitPacket(for: image, deviceType: 0x0052, softDevices: [0x0088])] {
            var link = LegacyDFULink(target: LegacyDFUTarget(configuration: configuration))
            var client = LegacyDFUClient(initPacket: initPacket.encoded(), firmware: image)
            #expect(link.run(&client) == .failed(.remote(.operationFailed, request: .initParameters)))
            #expect(link.packetWrites.count == 2)  // the sizes and the init packet
        }
        var link = LegacyDFULink(target: LegacyDFUTarget(configuration: configuration))
        var client = LegacyDFUClient(initPacket: LegacyDFUInitPacket(for: image, deviceType: 0x0052,
                                                                      softDevices: [0x0081]).encoded(), firmware: image)
        #expect(link.run(&client) == .finished)
    }

    @Test("a link drop at 40 % restarts the transfer from the beginning: there is no resume in Legacy DFU")
    func linkDropRestarts() {
        let image = Self.image(count: 10_240)
        let initPacket = LegacyDFUInitPacket(for: image).encoded()
        var link = LegacyDFULink(target: LegacyDFUTarget())
        link.target.addProgressMark(0.4)
        var first = LegacyDFUClient(initPacket: initPacket, firmware: image)
        #expect(link.run(&first) == .linkDropped)
        #expect(link.target.progress >= 0.4 && link.target.progress < 0.5)

        link.target.linkDropped()
        link.startNewConnection()
        var second = LegacyDFUClient(initPacket: initPacket, firmware: image)
        #expect(link.run(&second) == .finished)
        #expect(link.imageBytesWritten == 10_240)
        #expect(link.target.installedImage == image)
    }

    @Test("a bootloader still holding an old transfer answers Start with INVALID_STATE; after Reset it starts over")
    func leftoverTransfer() {
        let image = Self.image(count: 10_240)
        let initPacket = LegacyDFUInitPacket(for: image).encoded()
        var link = LegacyDFULink(target: LegacyDFUTarget())
        link.target.addProgressMark(0.4)
        var first = LegacyDFUClient(initPacket: initPacket, firmware: image)
        #expect(link.run(&first) == .linkDropped)

        link.startNewConnection()
        var second = LegacyDFUClient(initPacket: initPacket, firmware: image)
        #expect(link.run(&second) == .failed(.remote(.invalidState, request: .start)))
        #expect(link.controlWrites.last == [0x06])
        #expect(link.resets == 1)

        link.startNewConnection()
        var third = LegacyDFUClient(initPacket: initPacket, firmware: image)
        #expect(link.run(&third) == .finished)
        #expect(link.target.installedImage == image)
    }

    // MARK: Bootloader checks

    @Test("image bytes out of order are INVALID_STATE, more than announced DATA_SIZE, and Receive reports its count")
    func bootloaderChecks() {
        var target = LegacyDFUTarget()
        #expect(target.writePacket([1, 2, 3, 4]) == [.notify([0x10, 0x03, 0x02])])
        #expect(target.writeControlPoint([0x03]) == [.notify([0x10, 0x03, 0x02])])
        #expect(target.writeControlPoint([0x04]) == [.notify([0x10, 0x04, 0x02])])
        #expect(target.writeControlPoint([0x09]) == [.notify([0x10, 0x09, 0x03])])

        let image = Self.image(count: 8)
        #expect(target.writeControlPoint([0x01, 0x04]).isEmpty)
        #expect(target.writePacket(LegacyDFUImageSizes(application: 8).encoded()) == [.notify([0x10, 0x01, 0x01])])
        #expect(target.writeControlPoint([0x02, 0x00]).isEmpty)
        #expect(target.writePacket(LegacyDFUInitPacket(for: image).encoded()).isEmpty)
        #expect(target.writeControlPoint([0x02, 0x01]) == [.notify([0x10, 0x02, 0x01])])
        #expect(target.writeControlPoint([0x03]).isEmpty)
        #expect(target.writePacket(Array(image[0..<4])).isEmpty)
        #expect(target.writeControlPoint([0x07]) == [.notify([0x10, 0x07, 0x01, 0x04, 0x00, 0x00, 0x00])])
        #expect(target.writePacket(Array(image[4..<8]) + [0]) == [.notify([0x10, 0x03, 0x04])])
    }

    @Test("Start for an application together with a bootloader is NOT_SUPPORTED")
    func combinedImagesRefused() {
        var target = LegacyDFUTarget()
        #expect(target.writeControlPoint([0x01, 0x06]).isEmpty)
        let sizes = LegacyDFUImageSizes(bootloader: 4096, application: 4096)
        #expect(target.writePacket(sizes.encoded()) == [.notify([0x10, 0x01, 0x03])])
    }

    // MARK: Fixtures

    static func image(count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
    }
}

/// Carries a Legacy client's actions to a bootloader and its notifications back, in order and without a clock;
/// drops the link when the target reports a progress mark.
struct LegacyDFULink {
    enum Ending: Equatable {
        case finished
        case failed(LegacyDFUError)
        case linkDropped
        /// The client waited with nothing to come, or left notifications unread: a bug either side.
        case stalled
    }

    var target: LegacyDFUTarget
    private(set) var controlWrites: [[UInt8]] = []
    private(set) var packetWrites: [[UInt8]] = []
    private(set) var imageBytesWritten = 0
    private(set) var receipts = 0
    private(set) var resets = 0
    private var receivingImage = false

    init(target: LegacyDFUTarget) { self.target = target }

    mutating func startNewConnection() {
        controlWrites = []
        packetWrites = []
        imageBytesWritten = 0
        receipts = 0
        receivingImage = false
    }

    mutating func run(_ client: inout LegacyDFUClient) -> Ending {
        var notifications: [[UInt8]] = []
        var actions = client.start()
        while true {
            var waiting = false
            for (index, action) in actions.enumerated() {
                switch action {
                case .writeControl(let bytes):
                    controlWrites.append(bytes)
                    receivingImage = bytes == [0x03] || (receivingImage && bytes.first == 0x08)
                    for output in target.writeControlPoint(bytes) {
                        if case .notify(let value) = output { notifications.append(value) }
                        if output == .reset { resets += 1 }
                    }
                case .writePacket(let bytes):
                    packetWrites.append(bytes)
                    if receivingImage { imageBytesWritten += bytes.count }
                    for output in target.writePacket(bytes) {
                        switch output {
                        case .notify(let value):
                            notifications.append(value)
                            if value.first == LegacyDFUOpcode.packetReceiptCode { receipts += 1 }
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
        }
    }
}
