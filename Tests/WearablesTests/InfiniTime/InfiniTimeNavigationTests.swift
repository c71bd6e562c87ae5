import Testing

@testable import Wearables

@Suite("InfiniTime navigation")
struct InfiniTimeNavigationTests {
    @Test("icons are the 86 names of Navigation.cpp's iconMap, sent as ASCII")
    func icons() throws {
        #expect(InfiniTimeNavigationIcon.allCases.count == 86)
        #expect(InfiniTimeNavigationIcon.roundaboutLeft.encode() == Array("roundabout-left".utf8))
        #expect(try InfiniTimeNavigationIcon.decode(Array("turn-straight".utf8)) == .turnStraight)
        #expect(try InfiniTimeNavigationIcon.decode(Array("continue".utf8)) == .continue)
        // doc/NavigationService.md's spelling is not the firmware's: it would show the fallback icon.
        #expect(throws: GATTCodecError.unknownIdentifier(field: "navigation icon", value: 12)) {
            try InfiniTimeNavigationIcon.decode(Array("turn-stright".utf8))
        }
    }

    @Test("narrative and distance are UTF-8 as written (doc/NavigationService.md: \"50 m\")")
    func text() throws {
        let distance = InfiniTimeNavigationText("50 m")
        #expect(distance.encode() == [0x35, 0x30, 0x20, 0x6D])
        #expect(try InfiniTimeNavigationText.decode([0x35, 0x30, 0x20, 0x6D]) == distance)
        let narrative = "At the roundabout take the first exit"
        #expect(try InfiniTimeNavigationText.decode(Array(narrative.utf8)).text == narrative)
    }

    @Test("text is fitted to NimBLE's 512-byte attribute between characters; a longer write is refused")
    func textLimit() throws {
        let long = InfiniTimeNavigationText(String(repeating: "ü", count: 300))
        #expect(long.encode().count <= 512)
        #expect(long.text == String(repeating: "ü", count: 254) + "...")
        #expect(throws: GATTCodecError.truncated(expected: 512, actual: 513)) {
            try InfiniTimeNavigationText.decode(Array(repeating: 0x61, count: 513))
        }
    }

    @Test("progress is one byte 0…100 (doc/NavigationService.md: uint8, value 0-100)")
    func progress() throws {
        #expect(try InfiniTimeNavigationProgress(percent: 42).encode() == [0x2A])
        #expect(try InfiniTimeNavigationProgress.decode([0x64]).percent == 100)
        #expect(throws: GATTCodecError.outOfRange(field: "navigation progress", value: 101)) {
            try InfiniTimeNavigationProgress(percent: 101)
        }
        #expect(throws: GATTCodecError.outOfRange(field: "navigation progress", value: 200)) {
            try InfiniTimeNavigationProgress.decode([200])
        }
        #expect(throws: GATTCodecError.truncated(expected: 1, actual: 0)) { try InfiniTimeNavigationProgress.decode([]) }
    }
}
