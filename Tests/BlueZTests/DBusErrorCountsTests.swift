@testable import BlueZ
import DBus
import Testing

/// The label set of `wear2mqtt_dbus_errors_total` stays bounded whatever names a remote answers with.
@Suite("DBusErrorCounts")
struct DBusErrorCountsTests {
    @Test("errors count by name; timeouts and lost connections by kind; past the limit, new names count as other")
    func bounded() {
        var counts = DBusErrorCounts()
        counts.count(.remote(name: "org.bluez.Error.NotPermitted", message: "Not paired"))
        counts.count(.remote(name: "org.bluez.Error.NotPermitted", message: "again"))
        counts.count(.timeout(member: "Connect"))
        counts.count(.disconnected)
        #expect(counts.counts == ["org.bluez.Error.NotPermitted": 2, "timeout": 1, "disconnected": 1])
        for index in 0..<100 { counts.count(.remote(name: "com.example.Error.N\(index)", message: "")) }
        #expect(counts.counts.count == DBusErrorCounts.limit + 1, "the limit's names and other")
        #expect(counts.counts["other"] == UInt64(100 - (DBusErrorCounts.limit - 3)))
        counts.count(.remote(name: "org.bluez.Error.NotPermitted", message: ""))
        #expect(counts.counts["org.bluez.Error.NotPermitted"] == 3, "a name already counted keeps counting")
    }
}
