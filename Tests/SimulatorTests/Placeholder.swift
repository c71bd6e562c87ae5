import Testing
@Test func placeholderSimulatorTests() {}
