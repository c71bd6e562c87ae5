import DBus
import Testing

@testable import Gateway

/// `RadioChoice`: the loudest radio, unless the one used last time is within the hysteresis.
@Suite("Radio choice")
struct RadioChoiceTests {
    let local = ObjectPath("/org/bluez/hci0")
    let kitchen = ObjectPath("/org/esphome/kitchen")
    let hall = ObjectPath("/org/esphome/hall")

    @Test("nobody heard it: no choice; one radio: that one; several: the loudest, ties to the first listed")
    func loudest() {
        let choice = RadioChoice()
        #expect(choice.choose([], previous: kitchen) == nil)
        #expect(choice.choose([.init(adapter: hall, rssi: -90)], previous: nil) == hall)
        #expect(choice.choose([.init(adapter: local, rssi: -70), .init(adapter: kitchen, rssi: -60), .init(adapter: hall, rssi: -80)], previous: nil) == kitchen)
        #expect(choice.choose([.init(adapter: local, rssi: -70), .init(adapter: kitchen, rssi: -70)], previous: nil) == local)
    }

    @Test("the radio used last keeps the device until another is louder by 6 dB or more")
    func hysteresis() {
        let choice = RadioChoice()
        #expect(choice.choose([.init(adapter: kitchen, rssi: -75), .init(adapter: hall, rssi: -70)], previous: kitchen) == kitchen)
        #expect(choice.choose([.init(adapter: kitchen, rssi: -75), .init(adapter: hall, rssi: -69)], previous: kitchen) == hall)
        // The last radio no longer hears it (or has no slot): the loudest that does.
        #expect(choice.choose([.init(adapter: local, rssi: -90), .init(adapter: hall, rssi: -88)], previous: kitchen) == hall)
        #expect(RadioChoice(hysteresis: 0).choose([.init(adapter: kitchen, rssi: -75), .init(adapter: hall, rssi: -74)], previous: kitchen) == hall)
    }
}
