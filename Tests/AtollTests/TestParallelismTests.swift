import CAtollTestParallelism
import Testing

/// The test process bounds its own parallelism (Sources/CAtollTestParallelism) before Swift
/// Testing reads its environment: if the linker dropped that constructor, a plain `swift test`
/// would start every test at once again and time out under load.
@Suite struct TestParallelismTests {
    @Test func swiftTestingRunsABoundedNumberOfTestsAtOnce() {
        let width = atoll_test_parallelization_width()
        #expect(width >= 1)
        #expect(width <= 64)
    }
}
