import Wearables

extension FuzzTarget {
    /// InfiniTime's values: what the watch notifies (steps, motion, music buttons, call buttons) and what the host
    /// writes and the simulated watch decodes (new alert, music status / text / numbers / flags, navigation,
    /// weather, local time). Each value that decodes must come back from its own encoding; the host-side
    /// encoders must also stay inside the firmware's limits for any text the input spells.
    static let infiniTime = FuzzTarget(
        name: "infinitime",
        summary: "InfiniTime: steps, motion, music (events, status, text, numbers, flags), new alert, call response, "
            + "navigation, weather, local time"
    ) { bytes in
        check(bytes, InfiniTimeStepCount.decode, { $0.encode() }, "InfiniTimeStepCount")
        check(bytes, InfiniTimeMotionValues.decode, { $0.encode() }, "InfiniTimeMotionValues")
        check(bytes, InfiniTimeMusicEvent.decode, { $0.encode() }, "InfiniTimeMusicEvent")
        check(bytes, InfiniTimeMusicStatus.decode, { $0.encode() }, "InfiniTimeMusicStatus")
        check(bytes, InfiniTimeMusicFlag.decode, { $0.encode() }, "InfiniTimeMusicFlag")
        check(bytes, InfiniTimeMusicNumber.decode, { $0.encode() }, "InfiniTimeMusicNumber")
        check(bytes, InfiniTimeMusicText.decode, { $0.encode() }, "InfiniTimeMusicText")
        check(bytes, InfiniTimeNewAlert.decode, { $0.encode() }, "InfiniTimeNewAlert")
        check(bytes, InfiniTimeCallResponse.decode, { $0.encode() }, "InfiniTimeCallResponse")
        check(bytes, InfiniTimeNavigationIcon.decode, { $0.encode() }, "InfiniTimeNavigationIcon")
        check(bytes, InfiniTimeNavigationText.decode, { $0.encode() }, "InfiniTimeNavigationText")
        check(bytes, InfiniTimeNavigationProgress.decode, { $0.encode() }, "InfiniTimeNavigationProgress")
        check(bytes, InfiniTimeWeatherMessage.decode, { $0.encode() }, "InfiniTimeWeatherMessage")
        checkStable(LocalTimeInformation.self, bytes)
        checkTextLimits(String(decoding: bytes, as: UTF8.self))
    }
}

/// `checkRoundTrip` for the InfiniTime codecs, whose decoders throw only `GATTCodecError`.
private func check<Value: Equatable>(_ bytes: [UInt8], _ decode: ([UInt8]) throws(GATTCodecError) -> Value,
                                     _ encode: (Value) -> [UInt8], _ what: String) {
    checkRoundTrip(bytes, { input throws in try decode(input) }, encode, what)
}

/// Any text (here the input read as UTF-8, invalid sequences replaced) becomes values that fit the firmware's
/// buffers, end on a character boundary (they decode as UTF-8) and decode back to themselves.
private func checkTextLimits(_ text: String) {
    let music = InfiniTimeMusicText(text)
    precondition(music.encode().count <= InfiniTimeMusicText.maximumByteCount, "music text over 40 bytes")
    expectStable(music, { $0.encode() }, { try InfiniTimeMusicText.decode($0) }, "fitted InfiniTimeMusicText")
    let navigation = InfiniTimeNavigationText(text)
    precondition(navigation.encode().count <= InfiniTimeNavigationText.maximumByteCount, "navigation text over 512 bytes")
    expectStable(navigation, { $0.encode() }, { try InfiniTimeNavigationText.decode($0) }, "fitted InfiniTimeNavigationText")
    let half = text.index(text.startIndex, offsetBy: text.count / 2)
    let notifications: [(title: String?, body: String)] = [(String(text[..<half]), String(text[half...])), (nil, text)]
    for (title, body) in notifications {
        guard let alert = try? InfiniTimeNewAlert(category: .simpleAlert, title: title, body: body) else {
            precondition(title == nil && !body.unicodeScalars.contains { $0 != "\0" }, "a notification with text was refused")
            continue
        }
        let encoded = alert.encode()
        precondition(encoded.count - InfiniTimeNewAlert.headerByteCount <= InfiniTimeNewAlert.maximumTextByteCount,
                     "notification text over 99 bytes")
        expectStable(alert, { $0.encode() }, { try InfiniTimeNewAlert.decode($0) }, "fitted InfiniTimeNewAlert")
    }
    let weather = InfiniTimeCurrentWeather(
        timestamp: 0, temperature: .init(hundredthsOfDegreeCelsius: 0), minimumTemperature: .init(hundredthsOfDegreeCelsius: 0),
        maximumTemperature: .init(hundredthsOfDegreeCelsius: 0), location: text, icon: .unknown)
    expectStable(InfiniTimeWeatherMessage.current(weather), { $0.encode() }, { try InfiniTimeWeatherMessage.decode($0) },
                 "fitted weather location")
}
