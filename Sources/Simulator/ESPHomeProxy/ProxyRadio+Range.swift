import ESPHome

/// Every device walking out of the proxy's range and back in: the wearer carried them to another room, where another
/// proxy (another `wear2mqtt-sim proxy`, the same addresses in its scenario) hears them. `wear2mqtt-sim proxy` does it on
/// SIGUSR1 and SIGUSR2.
///
/// Out of range, a link ends as an ESP32's does when its peer stops answering: the supervision timeout runs out and
/// ESP-IDF reports the disconnection with `ESP_GATT_CONN_TIMEOUT` (0x08), which ESPHome passes on. A connect is then
/// taken as one to a device the proxy does not hear: it holds a slot until the connect timeout and fails with 0x3E
/// (`failConnecting`). An attempt already under way when the devices leave fails the same way.
///
/// Not modeled: the supervision timeout's own delay (the link drops at once), signal fading as the wearer walks, one
/// device leaving without the others. Coming back restores no link: the client connects again, as after any loss.
extension ProxyRadio {
    func walkOutOfRange() {
        loop.assertInEventLoop()
        guard state.value.inRange else { return }
        state.value.inRange = false
        state.value.batcher.reset()
        for address in state.value.phases.keys.sorted() {
            guard case .connected? = state.value.phases[address] else { continue }
            endLink(address)
            publishConnection(address, connected: false, error: ProxyErrorCode.connectionTimeout)
            publishSlots()
        }
    }

    /// Advertising resumes, each device's first advertisement within its interval, as when a scan starts.
    func walkBackIntoRange() {
        loop.assertInEventLoop()
        guard !state.value.inRange else { return }
        state.value.inRange = true
        let now = ContinuousClock.now
        for address in state.value.devices.keys.sorted() {
            guard var device = state.value.devices[address] else { continue }
            device.nextSighting = now + device.settings.advertisingInterval * Double.random(in: 0.05...1, using: &device.random)
            state.value.devices[address] = device
        }
    }
}
