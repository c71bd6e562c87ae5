import Foundation
import Testing
import Wearables

/// Issue 38: every event a driver raises is in its one list (`WearableDriver.events`), which Home Assistant's event
/// entity accepts: an event missing from it was dropped there as an "Invalid event type" (a GoFIT band's
/// `pairing_required`). Read from the driver's folder, as a newcomer adding an event would write it.
@Suite("Driver events")
struct DriverEventListTests {
    static let wearables = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/Wearables")

    /// `.event(name: "x"` and the names of `suspended ? "a" : "b"`-style choices on an `.event(name:` line.
    static func raised(in folder: String) throws -> Set<String> {
        let directory = wearables.appendingPathComponent(folder)
        var names: Set<String> = []
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") where line.contains(".event(name:") {
                let afterName = line.split(separator: "name:", maxSplits: 1).last.map(String.init) ?? ""
                let head = afterName.split(separator: ",", maxSplits: 1).first.map(String.init) ?? ""
                for part in head.split(separator: "\"", omittingEmptySubsequences: false).enumerated() where part.offset % 2 == 1 {
                    names.insert(String(part.element))
                }
            }
        }
        return names
    }

    @Test("each driver's folder raises only the events its list names", arguments: [
        ("GoFIT", GoFITDriver.events), ("Bose", BoseWearableDriver.events), ("Empatica", EmpaticaE4Driver.events),
        ("InfiniTime", InfiniTimeDriver.events), ("Polar", PolarDriver.events), ("ActiGraph", ActiGraphDriver.events),
    ])
    func eventsAreListed(folder: String, listed: [String]) throws {
        let raised = try Self.raised(in: folder)
        #expect(raised.subtracting(listed).isEmpty, "\(folder) raises \(raised.subtracting(listed).sorted()) without listing them")
    }

    @Test("the events every device may raise are the link's own")
    func commonEvents() throws {
        #expect(try Self.raised(in: "Driver").isEmpty, "the link names its events through DeviceLink.commonEvents")
        #expect(try Self.raised(in: "GATT").isEmpty, "the shared GATT toolkit raises no event of its own")
        #expect(DeviceLink.commonEvents == ["subscription_failed"])
    }
}
