/// The GATT services and characteristics of a PineTime running InfiniTime, as the lower-case 128-bit strings
/// BlueZ uses.
///
/// InfiniTime's own services sit on one custom base, `xxxxxxxx-78fc-48fe-8e23-433b3a1942d0`: the first 16 bits
/// name the service, the next 16 the characteristic (0 for the service itself). Source: `InfiniTimeOrg/InfiniTime`
/// `doc/ble.md` ("BLE UUIDs", with the release each service arrived in) and the `CharUuid` helpers of
/// `src/components/ble/MusicService.cpp`, `NavigationService.cpp`, `MotionService.cpp`, `SimpleWeatherService.h`
/// and the `NOTIFICATION_EVENT_SERVICE_UUID_BASE` of `AlertNotificationService.h`.
///
/// The standard services InfiniTime offers are listed in `Standard`, with the codecs of `GATT` that read
/// and write them: nothing here duplicates those codecs.
public enum InfiniTimeUUID {
    /// The 96 bits after the service and characteristic numbers.
    public static let baseSuffix = "-78fc-48fe-8e23-433b3a1942d0"

    /// `SSSSCCCC-78fc-48fe-8e23-433b3a1942d0` for service number `service` and characteristic number
    /// `characteristic` (0 for the service itself).
    public static func custom(service: UInt16, characteristic: UInt16 = 0) -> String {
        hex4(service) + hex4(characteristic) + baseSuffix
    }

    private static func hex4(_ value: UInt16) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }

    public enum Service {
        /// Music control, since InfiniTime 0.8 (`InfiniTimeMusic*`).
        public static let music = custom(service: 0x0000)
        /// Turn-by-turn navigation, since 0.11 (`InfiniTimeNavigation*`).
        public static let navigation = custom(service: 0x0001)
        /// Step count and raw acceleration, since 1.7 (`InfiniTimeStepCount`, `InfiniTimeMotionValues`).
        public static let motion = custom(service: 0x0003)
        /// The first weather service of 1.8–1.13 (a CBOR protocol), replaced in 1.14; not supported.
        public static let legacyWeather = custom(service: 0x0004)
        /// Current weather and forecast, since 1.14 (`InfiniTimeWeatherMessage`).
        public static let simpleWeather = custom(service: 0x0005)
    }

    public enum Characteristic {
        /// Watch → host, notify: the music app's buttons (`InfiniTimeMusicEvent`).
        public static let musicEvent = custom(service: 0x0000, characteristic: 0x0001)
        /// Host → watch: playing or paused (`InfiniTimeMusicStatus`).
        public static let musicStatus = custom(service: 0x0000, characteristic: 0x0002)
        /// Host → watch: UTF-8 text (`InfiniTimeMusicText`).
        public static let musicArtist = custom(service: 0x0000, characteristic: 0x0003)
        public static let musicTrack = custom(service: 0x0000, characteristic: 0x0004)
        public static let musicAlbum = custom(service: 0x0000, characteristic: 0x0005)
        /// Host → watch: 32-bit big-endian numbers (`InfiniTimeMusicNumber`).
        public static let musicPosition = custom(service: 0x0000, characteristic: 0x0006)
        public static let musicTotalLength = custom(service: 0x0000, characteristic: 0x0007)
        public static let musicTrackNumber = custom(service: 0x0000, characteristic: 0x0008)
        public static let musicTrackTotal = custom(service: 0x0000, characteristic: 0x0009)
        public static let musicPlaybackSpeed = custom(service: 0x0000, characteristic: 0x000A)
        /// Host → watch: one byte, zero or not (`InfiniTimeMusicFlag`).
        public static let musicRepeat = custom(service: 0x0000, characteristic: 0x000B)
        public static let musicShuffle = custom(service: 0x0000, characteristic: 0x000C)

        /// Host → watch: the maneuver's icon name (`InfiniTimeNavigationIcon`).
        public static let navigationFlags = custom(service: 0x0001, characteristic: 0x0001)
        /// Host → watch: the instruction's text (`InfiniTimeNavigationText`).
        public static let navigationNarrative = custom(service: 0x0001, characteristic: 0x0002)
        /// Host → watch: the distance to the maneuver as text, such as "50 m" (`InfiniTimeNavigationText`).
        public static let navigationManeuverDistance = custom(service: 0x0001, characteristic: 0x0003)
        /// Host → watch: route progress in percent (`InfiniTimeNavigationProgress`).
        public static let navigationProgress = custom(service: 0x0001, characteristic: 0x0004)

        /// Watch → host, notify only: the call buttons (`InfiniTimeCallResponse`), since 0.13. It lives in the
        /// standard Alert Notification Service (0x1811), next to New Alert.
        public static let notificationEvent = custom(service: 0x0002, characteristic: 0x0001)

        /// Read and notify: steps today (`InfiniTimeStepCount`).
        public static let stepCount = custom(service: 0x0003, characteristic: 0x0001)
        /// Read and notify: raw x, y, z (`InfiniTimeMotionValues`).
        public static let motionValues = custom(service: 0x0003, characteristic: 0x0002)

        /// Host → watch, write: `InfiniTimeWeatherMessage`.
        public static let weatherData = custom(service: 0x0005, characteristic: 0x0001)
    }

    /// The Bluetooth SIG services InfiniTime offers (`src/components/ble/NimbleController.cpp`, `Init`), with the
    /// codec that handles each.
    public enum Standard {
        /// Current Time Service 0x1805: Current Time 0x2A2B (`CurrentTime`, written as local wall time, 10 bytes)
        /// and, since 1.12, Local Time Information 0x2A0F (`LocalTimeInformation`).
        public static let currentTimeService = GATTUUID.string(for: GATTUUID.Service.currentTime)
        /// Alert Notification Service 0x1811: New Alert 0x2A46 in InfiniTime's own layout (`InfiniTimeNewAlert`),
        /// and the notification event characteristic above.
        public static let alertNotificationService = GATTUUID.string(for: 0x1811)
        public static let newAlert = GATTUUID.string(for: 0x2A46)
        /// Immediate Alert 0x1802, Alert Level 0x2A06 (`AlertLevel`): the watch shows "Alert : High" and buzzes.
        public static let immediateAlertService = GATTUUID.string(for: GATTUUID.Service.immediateAlert)
        /// Heart Rate 0x180D (`HeartRateMeasurement`; InfiniTime sends flags 0 and a u8 rate).
        public static let heartRateService = GATTUUID.string(for: GATTUUID.Service.heartRate)
        /// Battery 0x180F (`BatteryLevel`).
        public static let batteryService = GATTUUID.string(for: GATTUUID.Service.battery)
        /// Device Information 0x180A (`DeviceInformationReading`; Firmware Revision holds "1.14.0").
        public static let deviceInformationService = GATTUUID.string(for: GATTUUID.Service.deviceInformation)
        /// Nordic's Legacy DFU service, answered by the application itself (version 0x0008): the `Firmware`
        /// module's `LegacyDFUUUID` and `LegacyDFUClient`. Also the one 128-bit UUID InfiniTime advertises.
        public static let legacyDFUService = "00001530-1212-efde-1523-785feabcd123"
        /// Adafruit's BLE file transfer service (0xFEBB; `src/components/ble/FSService.h`), for resources
        /// (fonts, images); not supported.
        public static let fileSystemService = GATTUUID.string(for: 0xFEBB)
    }
}
