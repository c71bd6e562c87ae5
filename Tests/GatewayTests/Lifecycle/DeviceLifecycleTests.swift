@testable import Gateway
import Testing

/// The device lifecycle transition by transition: what the session is told to do after each thing that happens.
@Suite("Device lifecycle")
struct DeviceLifecycleTests {
    /// A lifecycle that went through `steps`.
    func after(_ steps: (inout DeviceLifecycle) -> Void) -> DeviceLifecycle {
        var lifecycle = DeviceLifecycle()
        steps(&lifecycle)
        return lifecycle
    }

    var connected: DeviceLifecycle { after { _ = $0.connecting(); _ = $0.connected() } }

    // MARK: The link

    @Test("connecting, connected, disconnected: each state published once; a session runs; a short pause, then again")
    func connectionCycle() {
        var lifecycle = DeviceLifecycle()
        #expect(lifecycle.mayConnect)
        #expect(lifecycle.connecting() == [.publish(.connecting)])
        #expect(lifecycle.connected() == [.publish(.connected), .runSession])
        #expect(lifecycle.connection == .connected)
        #expect(lifecycle.disconnected() == [.publish(.disconnected), .retry(afterBackoff: false)])
    }

    @Test("a failed attempt backs off; a failure while already disconnected publishes nothing new")
    func failedAttempts() {
        var lifecycle = DeviceLifecycle()
        _ = lifecycle.connecting()
        #expect(lifecycle.connectFailed() == [.publish(.disconnected), .retry(afterBackoff: true)])
        #expect(lifecycle.connectFailed() == [.retry(afterBackoff: true)])
    }

    // MARK: Disconnect hold

    @Test("disconnect while connected: disconnecting, then held after the link drops, until connect wakes it")
    func disconnectHold() {
        var lifecycle = connected
        #expect(lifecycle.disconnectRequested() == [.publish(.disconnecting), .disconnect])
        #expect(!lifecycle.mayConnect)
        #expect(lifecycle.disconnected() == [.publish(.disconnected), .waitUntilReleased])
        #expect(lifecycle.afterWaiting() == [.waitUntilReleased])
        #expect(lifecycle.connectRequested() == [.wake])
        #expect(lifecycle.mayConnect && lifecycle.afterWaiting().isEmpty)
    }

    @Test("disconnect while away holds without publishing; a failed disconnect restores connected")
    func disconnectWhileAwayAndFailure() {
        var away = DeviceLifecycle()
        #expect(away.disconnectRequested() == [.disconnect])
        #expect(away.connectFailed() == [.waitUntilReleased])
        var lifecycle = connected
        _ = lifecycle.disconnectRequested()
        #expect(lifecycle.disconnectFailed(wasConnected: true) == [.publish(.connected)])
        #expect(lifecycle.mayConnect && lifecycle.connection == .connected)
    }

    // MARK: Firmware updates

    @Test("dfu while connected starts at once; a second is refused as running")
    func updateWhileConnected() {
        var lifecycle = connected
        #expect(lifecycle.updateRequested() == [.startUpdate])
        #expect(lifecycle.update == .running)
        #expect(lifecycle.updateRequested() == [.refuseUpdate(scheduled: false)])
    }

    @Test("dfu while away is scheduled and starts on the next connection; a second is refused as scheduled")
    func scheduledUpdate() {
        var lifecycle = DeviceLifecycle()
        #expect(lifecycle.updateRequested() == [.scheduleUpdate])
        #expect(lifecycle.updateRequested() == [.refuseUpdate(scheduled: true)])
        _ = lifecycle.connecting()
        #expect(lifecycle.connected() == [.publish(.connected), .runSession, .startUpdate])
        #expect(lifecycle.update == .running)
    }

    @Test("an update restored from storage after a restart is scheduled")
    func restoredUpdate() {
        var lifecycle = DeviceLifecycle()
        lifecycle.scheduledUpdateRestored()
        #expect(lifecycle.update == .scheduled)
    }

    @Test("DFU hold: in the bootloader the application is not reconnected; released, the session is woken")
    func dfuHold() {
        var lifecycle = connected
        _ = lifecycle.updateRequested()
        lifecycle.updateHoldsDevice()
        lifecycle.enteredBootloader()
        #expect(!lifecycle.mayConnect)
        #expect(lifecycle.disconnected() == [.publish(.disconnected), .waitUntilReleased])
        #expect(lifecycle.updateRequested() == [.refuseUpdate(scheduled: false)], "still running")
        #expect(lifecycle.updateReleasesDevice(installed: true) == [.wake])
        #expect(lifecycle.mayConnect && !lifecycle.inBootloader)
        #expect(lifecycle.update == .running, "until the new firmware is read back")
        lifecycle.updateEnded()
        #expect(lifecycle.update == .none)
    }

    @Test("an update that fails in the bootloader leaves it there: the next dfu starts at once, while away")
    func leftInBootloader() {
        var lifecycle = connected
        _ = lifecycle.updateRequested()
        lifecycle.updateHoldsDevice()
        lifecycle.enteredBootloader()
        _ = lifecycle.disconnected()
        #expect(lifecycle.updateReleasesDevice(installed: false) == [.wake])
        lifecycle.updateEnded()
        #expect(lifecycle.inBootloader && lifecycle.canUpdateNow)
        #expect(lifecycle.updateRequested() == [.startUpdate])
    }

    @Test("a gateway restarted while an update held the device in its bootloader sends the next dfu there at once")
    func bootloaderRememberedAcrossARestart() {
        var lifecycle = DeviceLifecycle()
        #expect(lifecycle.updateRequested() == [.scheduleUpdate], "without the flag: waits for an application that is not there")
        var restarted = DeviceLifecycle()
        restarted.bootloaderRestored()
        #expect(restarted.inBootloader && restarted.canUpdateNow)
        #expect(restarted.updateRequested() == [.startUpdate])
        var back = DeviceLifecycle()
        _ = back.connecting()
        _ = back.connected()
        back.bootloaderRestored()
        #expect(!back.inBootloader, "a connected application is not in its bootloader")
    }

    @Test("the application connecting again means it is no longer in its bootloader")
    func applicationBack() {
        var lifecycle = after { $0.enteredBootloader() }
        _ = lifecycle.connecting()
        _ = lifecycle.connected()
        #expect(!lifecycle.inBootloader)
    }

    @Test("cancel: nothing to cancel, a scheduled update forgotten, a running one cancelled")
    func cancel() {
        var idle = DeviceLifecycle()
        #expect(idle.cancelRequested().isEmpty)
        var scheduled = after { _ = $0.updateRequested() }
        #expect(scheduled.cancelRequested() == [.forgetScheduledUpdate])
        #expect(scheduled.update == .none)
        var running = connected
        _ = running.updateRequested()
        #expect(running.cancelRequested() == [.cancelUpdate])
        #expect(running.update == .running, "running until the task ends")
    }

    // MARK: Stopping

    @Test("stop while connected: the update is cancelled, disconnecting then disconnected, and nothing reconnects")
    func stopWhileConnected() {
        var lifecycle = connected
        _ = lifecycle.updateRequested()
        #expect(lifecycle.stopRequested() == [.cancelUpdate, .publish(.disconnecting), .disconnect, .publish(.disconnected)])
        #expect(!lifecycle.mayConnect)
        #expect(lifecycle.connectRequested() == [.wake])
        #expect(!lifecycle.mayConnect, "a stopped device stays stopped")
    }

    @Test("stop while away publishes nothing and keeps a scheduled update in storage (no forget action)")
    func stopWhileAway() {
        var lifecycle = after { _ = $0.updateRequested() }
        #expect(lifecycle.stopRequested().isEmpty)
        var connecting = after { _ = $0.connecting() }
        #expect(connecting.stopRequested() == [.publish(.disconnected)])
    }
}
