import AtollServer
import AtollTesting
import Testing

/// The ``StoreContract`` on the embedded store: each behaviour on a fresh SQLite file.
@Suite struct SQLiteStoreContractTests {
    @Test(arguments: StoreContract.allCases)
    func contract(_ behaviour: StoreContract) async throws {
        let folder = try TemporaryFolder("atoll-store-contract")
        defer { folder.remove() }
        let store = try SQLiteServerStore(path: folder.url.appendingPathComponent("atoll.sqlite").path)
        do {
            try await behaviour.run(on: store)
        } catch {
            try? store.close()
            throw error
        }
        try store.close()
    }
}
