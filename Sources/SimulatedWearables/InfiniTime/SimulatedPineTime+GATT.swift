import Wearables

/// The GATT table of a simulated PineTime: what each InfiniTime release offers (docs/protocols/infinitime.md, "UUIDs").
extension SimulatedPineTime {
    /// The GATT table of the release `options` names.
    static func table(_ options: SimulatedPineTimeOptions, information: SimulatedDeviceInformation,
                      battery: SimulatedBattery) -> [SimulatedService] {
        var time = [SimulatedCurrentTime.characteristic]
        if options.hasLocalTime { time.append(SimulatedCharacteristic(localTimeUUID, flags: [.read, .write])) }
        let readWrite: CharacteristicFlags = [.read, .write]
        var table = [
            SimulatedService(BluetoothUUID(GATTUUID.Service.currentTime), characteristics: time),
            SimulatedService(BluetoothUUID(0x1811), characteristics: [
                SimulatedCharacteristic(newAlertUUID, flags: .write),
                SimulatedCharacteristic(custom(UUID.notificationEvent), flags: .notify),
            ]),
            SimulatedService(BluetoothUUID(GATTUUID.Service.immediateAlert), characteristics: [
                SimulatedCharacteristic(alertLevelUUID, flags: .writeWithoutResponse),
            ]),
            SimulatedService(BluetoothUUID(GATTUUID.Service.heartRate), characteristics: [
                SimulatedCharacteristic(heartRateUUID, flags: [.read, .notify], initialValue: [0, 0]),
            ]),
            battery.service,
            information.service,
            SimulatedService(custom(InfiniTimeUUID.Service.music), characteristics:
                [SimulatedCharacteristic(custom(UUID.musicEvent), flags: .notify)]
                + [UUID.musicStatus, UUID.musicArtist, UUID.musicTrack, UUID.musicAlbum, UUID.musicPosition,
                   UUID.musicTotalLength, UUID.musicTrackNumber, UUID.musicTrackTotal, UUID.musicPlaybackSpeed,
                   UUID.musicRepeat, UUID.musicShuffle].map { SimulatedCharacteristic(custom($0), flags: readWrite) }),
            SimulatedService(custom(InfiniTimeUUID.Service.navigation), characteristics:
                [UUID.navigationFlags, UUID.navigationNarrative, UUID.navigationManeuverDistance, UUID.navigationProgress]
                    .map { SimulatedCharacteristic(custom($0), flags: readWrite) }),
        ]
        if options.hasMotion {
            table.append(SimulatedService(custom(InfiniTimeUUID.Service.motion), characteristics: [
                SimulatedCharacteristic(custom(UUID.stepCount), flags: [.read, .notify]),
                SimulatedCharacteristic(custom(UUID.motionValues), flags: [.read, .notify]),
            ]))
        }
        if options.hasSimpleWeather {
            table.append(SimulatedService(custom(InfiniTimeUUID.Service.simpleWeather), characteristics: [
                SimulatedCharacteristic(custom(UUID.weatherData), flags: .write),
            ]))
        }
        table.append(PineTimeApplicationDFU.gattService)
        return table
    }
}
