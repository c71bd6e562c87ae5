import CEpoll
import Glibc

/// A detached thread of its own, named for `top -H` and perf (Linux keeps 15 bytes): the loops, the blocking MQTT
/// connect, fdatasync and file access off the loops. What Foundation's `Thread` gave, without Foundation (docs/
/// decisions.md, "A binary without ICU") and with a name that reaches the kernel.
public enum NamedThread {
    public static func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let work = Unmanaged.passRetained(Work(name: name, body: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let result = pthread_create(&thread, &attributes, { pointer in
            let work = Unmanaged<Work>.fromOpaque(pointer!).takeRetainedValue()
            _ = wear2mqtt_name_this_thread(work.name)
            work.body()
            return nil
        }, work)
        // Only a process out of threads or memory gets here; nothing it runs could go on without this one.
        precondition(result == 0, "cannot start the thread \(name): error \(result)")
    }

    private final class Work: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}
