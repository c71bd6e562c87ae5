import Testing
@testable import Wearables
@testable import Firmware

@Suite("DFU progress meter")
struct DFUProgressMeterTests {
    let start = ContinuousClock.now

    @Test("percent covers every image of the package, one decimal, rounded down")
    func percentOverThePackage() {
        var meter = DFUProgressMeter(totalBytes: 3000)
        _ = meter.update(DFUTransferProgress(acknowledgedBytes: 1000, totalBytes: 1000), at: start)
        #expect(meter.percent == 33.3)
        meter.imageCompleted(size: 1000)
        _ = meter.update(DFUTransferProgress(acknowledgedBytes: 1999, totalBytes: 2000), at: start + .seconds(5))
        #expect(meter.confirmedBytes == 2999)
        #expect(meter.percent == 99.9)
        _ = meter.update(DFUTransferProgress(acknowledgedBytes: 2000, totalBytes: 2000), at: start + .seconds(6))
        #expect(meter.percent == 100)
    }

    @Test("a report per whole percent, or after a second without one")
    func throttling() {
        var meter = DFUProgressMeter(totalBytes: 10_000)
        #expect(meter.update(DFUTransferProgress(acknowledgedBytes: 10, totalBytes: 10_000), at: start) != nil)
        #expect(meter.update(DFUTransferProgress(acknowledgedBytes: 50, totalBytes: 10_000), at: start + .milliseconds(100)) == nil)
        #expect(meter.update(DFUTransferProgress(acknowledgedBytes: 100, totalBytes: 10_000), at: start + .milliseconds(200)) != nil)
        #expect(meter.update(DFUTransferProgress(acknowledgedBytes: 110, totalBytes: 10_000), at: start + .milliseconds(300)) == nil)
        #expect(meter.update(DFUTransferProgress(acknowledgedBytes: 120, totalBytes: 10_000), at: start + .milliseconds(1300)) != nil)
    }

    @Test("remaining time from this run's rate; none until bytes have flowed for half a second")
    func remainingTime() {
        var meter = DFUProgressMeter(totalBytes: 10_000)
        let first = meter.update(DFUTransferProgress(acknowledgedBytes: 1000, totalBytes: 10_000), at: start)
        #expect(first?.remainingSeconds == nil)
        #expect(first?.state == "updating")
        // 1000 bytes in 2 s: 500 B/s, 8000 left.
        let later = meter.update(DFUTransferProgress(acknowledgedBytes: 2000, totalBytes: 10_000), at: start + .seconds(2))
        #expect(later?.remainingSeconds == 16)
    }

    @Test("after a lost link the rate starts again, so bytes the bootloader kept do not look fast")
    func rateRestartsAfterALostLink() {
        var meter = DFUProgressMeter(totalBytes: 10_000)
        _ = meter.update(DFUTransferProgress(acknowledgedBytes: 0, totalBytes: 10_000), at: start)
        _ = meter.update(DFUTransferProgress(acknowledgedBytes: 4000, totalBytes: 10_000), at: start + .seconds(40))
        meter.linkLost()
        // Select reports 4000 at once after the reconnect: no rate yet.
        let resumed = meter.update(DFUTransferProgress(acknowledgedBytes: 4000, totalBytes: 10_000), at: start + .seconds(50))
        #expect(resumed?.remainingSeconds == nil)
        // Then 1000 bytes in 1 s: 5000 left at 1000 B/s.
        let report = meter.report(at: start + .seconds(51))
        #expect(report.remainingSeconds == nil)
        _ = meter.update(DFUTransferProgress(acknowledgedBytes: 5000, totalBytes: 10_000), at: start + .seconds(51))
        #expect(meter.report(at: start + .seconds(51)).remainingSeconds == 5)
    }

    @Test("progress never goes back: the new client's zero after a reconnect, or a discarded object, keeps the percent shown")
    func progressNeverGoesBack() {
        var meter = DFUProgressMeter(totalBytes: 10_000)
        _ = meter.update(DFUTransferProgress(acknowledgedBytes: 4000, totalBytes: 10_000), at: start)
        meter.linkLost()
        let reconnected = meter.update(DFUTransferProgress(acknowledgedBytes: 0, totalBytes: 10_000), at: start + .seconds(2))
        #expect(reconnected?.percent == 40)
        _ = meter.update(DFUTransferProgress(acknowledgedBytes: 3000, totalBytes: 10_000), at: start + .seconds(3))
        #expect(meter.percent == 40)
        _ = meter.update(DFUTransferProgress(acknowledgedBytes: 4500, totalBytes: 10_000), at: start + .seconds(4))
        #expect(meter.percent == 45)
        meter.imageCompleted(size: 5000)
        _ = meter.update(DFUTransferProgress(acknowledgedBytes: 0, totalBytes: 5000), at: start + .seconds(5))
        #expect(meter.percent == 50, "the next image starts from zero on top of the completed one")
    }

    @Test("an empty package is complete")
    func emptyPackage() {
        #expect(DFUProgressMeter(totalBytes: 0).percent == 100)
    }
}

@Suite("DFU client actions")
struct DFUClientActionTests {
    @Test("both clients speak the same actions, failures become DFU_FAILED with the bootloader's code")
    func clientsAsSteps() {
        var secure = SecureDFUClient(initPacket: [1, 2, 3], firmware: Array(repeating: 7, count: 100))
        guard case .writeControl(let select) = secure.start().first else {
            Issue.record("Secure DFU starts with a control point write")
            return
        }
        #expect(select == SecureDFURequest.select(.command).encoded())
        let refused = secure.answer(SecureDFUResponse.failure(requestOpcode: SecureDFUOpcode.select.rawValue,
                                                              result: .extendedError, extendedError: .verificationFailed).encoded())
        guard case .failed(let error) = refused.last else {
            Issue.record("a refused Select ends the transfer")
            return
        }
        #expect(error.commandError.code == .dfuFailed)
        #expect(error.commandError.vendorCode == 0x0B0C)

        var legacy = LegacyDFUClient(initPacket: [1, 2], firmware: [9, 9, 9])
        let first = legacy.start()
        #expect(first.count == 3)
        if case .waitForNotification = first.last {} else { Issue.record("Legacy DFU waits for the answer to Start") }
        #expect(legacy.progress == DFUTransferProgress(acknowledgedBytes: 0, totalBytes: 3))
    }

    @Test("package image kinds map to Legacy DFU types: SoftDevice and bootloader is mode 3, the *_application keys have none")
    func legacyTypes() {
        #expect(LegacyDFUImageType(DFUImageKind.application) == .application)
        #expect(LegacyDFUImageType(DFUImageKind.softDevice) == .softDevice)
        #expect(LegacyDFUImageType(DFUImageKind.bootloader) == .bootloader)
        #expect(LegacyDFUImageType(DFUImageKind.softDeviceBootloader) == [.softDevice, .bootloader])
        #expect(LegacyDFUImageType(DFUImageKind.softDeviceBootloader)?.rawValue == 0x03)
        for kind in [DFUImageKind.softDeviceApplication, .bootloaderApplication, .softDeviceBootloaderApplication] {
            #expect(LegacyDFUImageType(kind) == nil)
        }
    }
}
