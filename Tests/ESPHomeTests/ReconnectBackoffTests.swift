import Testing

@testable import ESPHome

@Suite("ESPHome: reconnect backoff")
struct ReconnectBackoffTests {
    @Test("doubles from the first delay to the cap, and starts over after a connection got ready")
    func doubling() {
        var backoff = ReconnectBackoff(first: .seconds(1), maximum: .seconds(60))
        #expect((0..<8).map { _ in backoff.failed() } == [1, 2, 4, 8, 16, 32, 60, 60].map { .seconds($0) })
        backoff.succeeded()
        #expect(backoff.failed() == .seconds(1))
        var many = ReconnectBackoff(first: .milliseconds(1), maximum: .seconds(3600))
        for _ in 0..<1000 { _ = many.failed() }
        #expect(many.failed() == .seconds(3600))
    }
}
