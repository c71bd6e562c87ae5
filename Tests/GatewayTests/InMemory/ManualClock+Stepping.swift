import Wear2MQTTTesting

extension ManualClock {
    /// Moves the clock on a `step` at a time until `condition` holds (checked before each step), at most `limit` on;
    /// false if it still does not. For what comes once a device's or a driver's time has passed, wherever the clock
    /// finds the timers that make it (a timer armed a moment late is still reached by the next step), each step
    /// letting what it woke run to its next sleep on the clock before the next (however loaded the machine).
    func step(by step: Duration, until condition: () -> Bool, limit: Duration = .seconds(60)) async -> Bool {
        let end = now + limit
        while !condition() {
            guard now < end else { return false }
            await advance(by: step)
            await settled()
        }
        return true
    }
}
