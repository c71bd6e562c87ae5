import Testing

@testable import Wearables
@testable import Firmware

/// What `LegacyDFUTarget` offers the simulator beyond the protocol: an injected Validate status, the bytes it
/// received, and the init packet of the image it installed.
@Suite("Legacy DFU bootloader: fault injection and what it installed")
struct LegacyDFUTargetFaultTests {
    static let image: [UInt8] = (0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }

    @Test("rejectNextValidation answers that status once; the same transfer then validates and installs")
    func rejectedValidation() {
        var target = LegacyDFUTarget()
        target.rejectNextValidation(.operationFailed)
        let initPacket = LegacyDFUInitPacket(for: Self.image, applicationVersion: 10203)
        #expect(target.writeControlPoint(LegacyDFURequest.start(.application).encoded()).isEmpty)
        _ = target.writePacket(LegacyDFUImageSizes(application: UInt32(Self.image.count)).encoded())
        _ = target.writeControlPoint(LegacyDFURequest.initParameters(complete: false).encoded())
        _ = target.writePacket(initPacket.encoded())
        _ = target.writeControlPoint(LegacyDFURequest.initParameters(complete: true).encoded())
        _ = target.writeControlPoint(LegacyDFURequest.receiveFirmware.encoded())
        var answers: [LegacyDFUTargetOutput] = []
        for start in stride(from: 0, to: Self.image.count, by: 20) {
            answers += target.writePacket(Array(Self.image[start..<min(start + 20, Self.image.count)]))
        }
        #expect(answers == [.notify([0x10, 0x03, 0x01])])
        #expect(target.receivedImageBytes == Self.image.count)

        #expect(target.writeControlPoint(LegacyDFURequest.validate.encoded()) == [.notify([0x10, 0x04, 0x06])])
        #expect(target.writeControlPoint(LegacyDFURequest.validate.encoded()) == [.notify([0x10, 0x04, 0x01])])
        #expect(target.installedInitPacket == nil)
        #expect(target.writeControlPoint(LegacyDFURequest.activateAndReset.encoded()) == [.reset])
        #expect(target.installedImage == Self.image)
        #expect(target.installedInitPacket?.applicationVersion == 10203)
    }

    @Test("a link drop does not cancel an injected status: the client of the next connection meets it")
    func rejectionOutlivesTheLink() {
        var target = LegacyDFUTarget()
        target.rejectNextValidation(.crcError)
        target.linkDropped()
        var link = LegacyDFULink(target: target)
        var client = LegacyDFUClient(initPacket: LegacyDFUInitPacket(for: Self.image).encoded(), firmware: Self.image)
        #expect(link.run(&client) == .failed(.remote(.crcError, request: .validate)))
        #expect(link.resets == 1, "the client resets the bootloader after the error")
        #expect(link.target.installedImage == nil)
    }
}
