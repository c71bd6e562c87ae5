#if DEBUG
import EventLoop
import Foundation

/// Debug builds only (release builds, `deploy/build`, do not contain it): with
/// `WEAR2MQTT_DEBUG_STALL_DATA_PATH_AFTER_S=N` the data-path loop's thread blocks for good N seconds after start, as a
/// hung loop would, so a test can see the systemd watchdog pings stop while the process lives on.
public enum DebugDataPathStall {
    static let variable = "WEAR2MQTT_DEBUG_STALL_DATA_PATH_AFTER_S"

    public static func install(on loop: EventLoop, environment: [String: String]) {
        guard let text = environment[variable], let seconds = Double(text), seconds >= 0 else { return }
        FileHandle.standardError.write(Data("wear2mqtt: debug: the data-path loop stalls in \(seconds) s\n".utf8))
        loop.execute {
            loop.schedule(at: .now + .seconds(seconds)) {
                // Written on the loop thread itself: nothing the loop does can follow this line.
                FileHandle.standardError.write(Data("wear2mqtt: debug: the data-path loop stalls now\n".utf8))
                while true { sleep(3600) }
            }
        }
    }
}
#endif
