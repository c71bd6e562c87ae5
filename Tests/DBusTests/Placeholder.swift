import Testing
@Test func placeholderDBusTests() {}
