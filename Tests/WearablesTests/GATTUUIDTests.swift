import Testing
import Wearables

@Suite("GATT UUIDs")
struct GATTUUIDTests {
    @Test("a 16-bit assigned number expands to BlueZ's lower-case 128-bit string")
    func expands() {
        #expect(GATTUUID.string(for: GATTUUID.Service.heartRate) == "0000180d-0000-1000-8000-00805f9b34fb")
        #expect(
            GATTUUID.string(for: GATTUUID.Characteristic.heartRateMeasurement) == "00002a37-0000-1000-8000-00805f9b34fb"
        )
        #expect(GATTUUID.string(for: 0x0001) == "00000001-0000-1000-8000-00805f9b34fb")
        #expect(GATTUUID.string(for: 0xFDD2) == "0000fdd2-0000-1000-8000-00805f9b34fb")
    }

    @Test("the short form is found in either case and only on the Bluetooth Base UUID")
    func parses() {
        #expect(GATTUUID.shortForm(of: "0000180d-0000-1000-8000-00805f9b34fb") == 0x180D)
        #expect(GATTUUID.shortForm(of: "0000180D-0000-1000-8000-00805F9B34FB") == 0x180D)
        #expect(GATTUUID.shortForm(of: "00002a5b-0000-1000-8000-00805f9b34fb") == 0x2A5B)
        // A 32-bit UUID on the base, a vendor's 128-bit UUID, and things that are not UUIDs.
        #expect(GATTUUID.shortForm(of: "1234180d-0000-1000-8000-00805f9b34fb") == nil)
        #expect(GATTUUID.shortForm(of: "0000180d-0000-1000-8000-00805f9b34fc") == nil)
        #expect(GATTUUID.shortForm(of: "0000+18d-0000-1000-8000-00805f9b34fb") == nil)
        #expect(GATTUUID.shortForm(of: "180d") == nil)
        #expect(GATTUUID.shortForm(of: "") == nil)
    }

    @Test("every assigned number survives string(for:) → shortForm(of:)")
    func roundTrips() {
        let numbers: [UInt16] = [
            GATTUUID.Service.heartRate, GATTUUID.Service.battery, GATTUUID.Service.deviceInformation,
            GATTUUID.Service.immediateAlert, GATTUUID.Service.currentTime, GATTUUID.Service.pulseOximeter,
            GATTUUID.Service.healthThermometer, GATTUUID.Service.runningSpeedAndCadence,
            GATTUUID.Service.cyclingSpeedAndCadence, GATTUUID.Characteristic.heartRateMeasurement,
            GATTUUID.Characteristic.bodySensorLocation, GATTUUID.Characteristic.heartRateControlPoint,
            GATTUUID.Characteristic.batteryLevel, GATTUUID.Characteristic.manufacturerName,
            GATTUUID.Characteristic.modelNumber, GATTUUID.Characteristic.serialNumber,
            GATTUUID.Characteristic.hardwareRevision, GATTUUID.Characteristic.firmwareRevision,
            GATTUUID.Characteristic.softwareRevision, GATTUUID.Characteristic.systemID, GATTUUID.Characteristic.pnpID,
            GATTUUID.Characteristic.alertLevel, GATTUUID.Characteristic.currentTime,
            GATTUUID.Characteristic.plxSpotCheckMeasurement, GATTUUID.Characteristic.plxContinuousMeasurement,
            GATTUUID.Characteristic.temperatureMeasurement, GATTUUID.Characteristic.rscMeasurement,
            GATTUUID.Characteristic.cscMeasurement,
        ]
        #expect(Set(numbers).count == 28)
        for number in numbers {
            #expect(GATTUUID.shortForm(of: GATTUUID.string(for: number)) == number)
        }
    }

    @Test("the assigned numbers are the Bluetooth SIG's")
    func assignedNumbers() {
        #expect(GATTUUID.Service.pulseOximeter == 0x1822)
        #expect(GATTUUID.Service.cyclingSpeedAndCadence == 0x1816)
        #expect(GATTUUID.Characteristic.heartRateMeasurement == 0x2A37)
        #expect(GATTUUID.Characteristic.plxSpotCheckMeasurement == 0x2A5E)
        #expect(GATTUUID.Characteristic.plxContinuousMeasurement == 0x2A5F)
        #expect(GATTUUID.Characteristic.temperatureMeasurement == 0x2A1C)
        #expect(GATTUUID.Characteristic.currentTime == 0x2A2B)
        #expect(GATTUUID.Characteristic.pnpID == 0x2A50)
    }
}
