@testable import BlueZ
import DBus
import Foundation
import Testing
import Wearables

/// Issue 39: each driver's description (`DriverDescription`) is what every surface reads, so it must agree with
/// what the driver does: its advertisement with `match`, its commands' fields with the contract, its long-running
/// rules with the requests that run long.
@Suite("Driver descriptions")
struct DriverDescriptionTests {
    static let drivers = WearableDrivers.all.drivers.map { ($0.name, $0) }

    static func advertisement(name: String? = nil, services: [String]) -> Advertisement {
        var properties: [String: DBusValue] = ["UUIDs": .strings(services)]
        if let name { properties["Name"] = .string(name) }
        return Advertisement(path: "/org/bluez/hci0/dev_A0_9E_1A_00_00_01", properties: properties)
    }

    @Test("every service a description names is one its driver claims", arguments: drivers.map(\.0))
    func servicesMatch(name: String) throws {
        let driver = try #require(WearableDrivers.all.driver(named: name))
        let services = driver.driverDescription.advertisement.serviceUUIDs
        #expect(!services.isEmpty)
        for service in services {
            #expect(driver.match(Self.advertisement(services: [service])) != nil, "\(name) does not claim \(service)")
            #expect(WearableDrivers.all.bestMatch(for: Self.advertisement(services: [service]))?.name == name
                    || driver.driverDescription.advertisement.isFallback, "\(service) goes to another driver")
        }
    }

    @Test("names are unique and exactly one driver is the fallback, the standard profiles")
    func namesAndFallback() {
        let names = WearableDrivers.all.drivers.map { driver in driver.name }
        #expect(Set(names).count == names.count)
        #expect(WearableDrivers.all.fallback.name == StandardGATTDriver.name)
        #expect(WearableDrivers.all.drivers.filter { $0.driverDescription.advertisement.isFallback }.count == 1)
    }

    @Test("every driver can be connected and disconnected; firmware updates where a method is described", arguments: drivers.map(\.0))
    func linkAndFirmwareCommands(name: String) throws {
        let description = try #require(WearableDrivers.all.driver(named: name)).driverDescription
        #expect(description.commandNames.isSuperset(of: ["connect", "disconnect", "refresh"]))
        #expect(description.commandNames.contains("dfu") == (description.firmwareUpdate != nil))
        #expect(description.commandNames.contains("dfu/cancel") == (description.firmwareUpdate != nil))
        #expect(description.commandNames.contains("sync") == !description.recordKinds.isEmpty)
        #expect(description.pairing == .codeShownOnDevice
                ? description.commandNames.isSuperset(of: [PairingMethod.showCodeCommand, PairingMethod.confirmCodeCommand])
                : !description.commandNames.contains(PairingMethod.showCodeCommand))
    }

    @Test("the contract's commands are described alike by every driver that has them (find by level or by vibrations)")
    func contractCommandsAlike() {
        let contract = Dictionary(CommandDescription.contract.map { ($0.name, $0) }) { first, _ in first }
        for driver in WearableDrivers.all.drivers {
            for command in driver.driverDescription.commands {
                guard let shared = contract[command.name], command.name != "configure" else { continue }
                let alike = command == shared || command == .findByVibrations
                #expect(alike, "\(driver.name)'s \(command.name) differs from the contract's")
            }
        }
    }

    @Test("the requests that run long, decided from the descriptions before the device is known")
    func longRunning() {
        let registry = WearableDrivers.all
        #expect(registry.runsLong("sync", [:]) && registry.runsLong("dfu", ["file": "a.zip"]))
        #expect(registry.runsLong("configure", ["epoch": .object([:])]) && !registry.runsLong("configure", ["sensors": .object([:])]))
        #expect(registry.runsLong("recording", ["action": "fetch"]) && registry.runsLong("recording", ["action": "list"]))
        #expect(!registry.runsLong("recording", ["action": "start"]) && !registry.runsLong("refresh", [:]))
        #expect(!registry.runsLong("no_such_command", [:]))
    }

    @Test("sensors with a rate are streams a client can plot; every sensor a description lists has a shape and fields")
    func sensorShapes() {
        for driver in WearableDrivers.all.drivers {
            for sensor in driver.driverDescription.sensors {
                #expect(!sensor.kind.fields.isEmpty)
                #expect(sensor.ratesHz.allSatisfy { $0 > 0 })
            }
        }
        #expect(SensorKind.ecg.shape == .waveform && SensorKind.accelerometer.shape == .vector && SensorKind.ppi.shape == .beatIntervals)
    }

    @Test("a description is JSON any client reads: driver, commands with their fields, sensors with their shapes")
    func json() throws {
        let value = PolarDriver.driverDescription.deviceValue
        #expect(value["driver"]?.text == "polar")
        let recording = try #require(value["commands"]?.list?.first { $0["name"]?.text == "recording" })
        #expect(recording["long_running"]?["field"]?.text == "action")
        #expect(recording["arguments"]?.list?.first?["options"]?.list?.count == 6)
        #expect(value["sensors"]?.list?.first { $0["key"]?.text == "ecg" }?["shape"]?.text == "waveform")
        #expect(value["status_flags"]?.list?.first?["key"]?.text == "recording")
        #expect(try JSONSerialization.jsonObject(with: Data(JSONWriter.encode(value))) is [String: Any])
    }
}
