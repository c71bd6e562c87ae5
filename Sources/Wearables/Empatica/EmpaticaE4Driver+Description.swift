extension EmpaticaE4Driver {
    public static let driverDescription = DriverDescription(
        name: "empatica", vendor: "Empatica",
        summary: "Empatica E4 wristband: blood volume pulse, electrodermal activity, skin temperature, motion, and beats derived from the pulse",
        advertisement: AdvertisementDescription(serviceUUIDs: [E4UUID.Service.sensors], namePrefixes: ["Empatica E4"]),
        sensors: [
            SensorDescription(.bvp, ratesHz: [64]),
            SensorDescription(.accelerometer, unit: "g", ratesHz: [32]),
            SensorDescription(.eda, unit: "µS", ratesHz: [4]),
            SensorDescription(.skinTemperature, unit: "°C", ratesHz: [4]),
            // Derived on the gateway from the pulse after a warm-up of about 20 s.
            SensorDescription(.heartRate),
            SensorDescription(.ibi, unit: "s"),
        ],
        events: [EventDescription("tag", "The wristband's button: a moment marked by the wearer")],
        commands: [.refresh] + CommandDescription.linkCommands)
}
