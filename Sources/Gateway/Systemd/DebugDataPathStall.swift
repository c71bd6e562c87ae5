#if DEBUG
import EventLoop
import Glibc

/// Debug builds only (release builds, `deploy/build`, do not contain it): with
/// `WEAR2MQTT_DEBUG_STALL_DATA_PATH_AFTER_S=N` the data-path loop's thread blocks for good N seconds after start, as a
/// hung loop would, so a test can see the systemd watchdog pings stop while the process lives on.
public enum DebugDataPathStall {
    static let variable = "WEAR2MQTT_DEBUG_STALL_DATA_PATH_AFTER_S"

    public static func install(on loop: EventLoop, environment: [String: String]) {
        guard let text = environment[variable], let seconds = Double(text), seconds >= 0 else { return }
        say("the data-path loop stalls in \(seconds) s")
        loop.execute {
            loop.schedule(at: .now + .seconds(seconds)) {
                // Written on the loop thread itself: nothing the loop does can follow this line.
                say("the data-path loop stalls now")
                while true { sleep(3600) }
            }
        }
    }

    private static func say(_ line: String) {
        let text = "wear2mqtt: debug: \(line)\n"
        _ = text.withCString { write(STDERR_FILENO, $0, strlen($0)) }
    }
}
#endif
