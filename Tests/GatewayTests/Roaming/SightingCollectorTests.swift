import Gateway
import Testing

@Suite("Roaming: a gateway's sighting reports")
struct SightingCollectorTests {
    @Test func readingsOfAnIntervalAreAveragedAndCounted() {
        var collector = SightingCollector()
        collector.heard("band", rssi: -60)
        collector.heard("band", rssi: -64)
        collector.heard("strap", rssi: -80)
        let report = collector.report(gateway: "hall", connected: [], lost: [])
        #expect(report == SightingReport(gateway: "hall", devices: [
            "band": .init(rssi: -62, heard: 2), "strap": .init(rssi: -80, heard: 1),
        ]))
        // A new interval: nothing heard, nothing held, nothing reported.
        #expect(collector.report(gateway: "hall", connected: [], lost: []).devices.isEmpty)
    }

    @Test func aConnectedDeviceThatStoppedAdvertisingIsReportedAtItsLastLevel() {
        var collector = SightingCollector()
        collector.heard("band", rssi: -58)
        _ = collector.report(gateway: "hall", connected: ["band"], lost: [])
        #expect(collector.report(gateway: "hall", connected: ["band"], lost: []).devices["band"]
                == .init(rssi: -58, heard: 0, connected: true))
        #expect(collector.report(gateway: "hall", connected: [], lost: ["band"]).devices["band"]
                == .init(rssi: -58, heard: 0, lost: true))
        collector.forget("band")
        #expect(collector.report(gateway: "hall", connected: ["band"], lost: []).devices["band"]?.rssi == -100)
    }
}
