import DBus
import Simulator

extension SimulatorControlClient {
    /// Waits until a simulator serves its control interface on this bus, which it takes after `org.bluez` and its
    /// objects: woken by the bus's NameOwnerChanged, watched from before the first look, so a simulator child process
    /// that is still starting is not mistaken for one that is gone. False after `timeout`, a failure guard.
    public func untilServing(timeout: Duration = .seconds(30)) async -> Bool {
        let changes = ChangeNotifier()
        guard let owners = try? await bus.signals(MatchRule(
            sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
            arg0: SimulatorControl.busName)) else { return false }
        let watcher = Task {
            for await _ in owners { changes.changed() }
        }
        defer { watcher.cancel() }
        return await changes.until(timeout: timeout) {
            (try? await bus.nameOwner(SimulatorControl.busName)).flatMap { $0 } != nil
        }
    }
}
