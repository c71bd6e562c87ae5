import Testing
@Test func placeholderWearablesTests() {}
