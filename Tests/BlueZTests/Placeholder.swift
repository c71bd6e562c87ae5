import Testing
@Test func placeholderBlueZTests() {}
