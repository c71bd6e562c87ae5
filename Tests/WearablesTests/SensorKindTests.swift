import Testing
import Wearables

@Suite struct SensorKindTests {
    @Test("every kind is a key of its own: equal kinds hash alike, and a set of all kinds holds each once")
    func hashing() {
        let kinds = SensorKind.allCases
        #expect(Set(kinds).count == kinds.count)
        #expect(Set(kinds + kinds) == Set(kinds))
        let counts = Dictionary(kinds.map { ($0, $0.rawValue) }, uniquingKeysWith: { first, _ in first })
        for kind in kinds {
            #expect(counts[kind] == kind.rawValue)
            #expect(kind.hashValue == SensorKind(rawValue: kind.rawValue)!.hashValue)
        }
        #expect(Set(kinds.map(\.hashValue)).count > kinds.count / 2, "hashes spread over the kinds")
    }
}
