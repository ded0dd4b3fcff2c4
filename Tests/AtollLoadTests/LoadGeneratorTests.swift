import AtollCore
import AtollLoad
import AtollTesting
import Foundation
import Testing

/// A short run against a server in this process: a few sessions for a second, every write
/// acknowledged and downloaded by the other sessions of its realm. No timing is asserted.
@Suite struct LoadGeneratorTests {
    @Test func everyWriteReachesTheOtherSessionsOfItsRealm() async throws {
        let server = try await SyncTestServer.start(appId: "load", realTime: true)
        do {
            let configuration = LoadGenerator.Configuration(
                baseURLs: [server.baseURL], appID: "load", sessions: 6, connections: 2, users: 2, sessionsPerRealm: 3, padding: 16)
            #expect(configuration.placement(ofSession: 3) == (1, SessionID(2)))
            let generator = try await LoadGenerator.connect(configuration)
            #expect(generator.boundSessions == 6, "\(generator.failures)")
            let phase = await generator.run(rate: 24, warmup: 0.25, duration: 1, drain: 20)
            await generator.close()
            #expect(phase.writes > 0)
            #expect(phase.acknowledged == phase.writes, "\(phase.failures)")
            #expect(phase.expectedDownloads == phase.writes * 2)
            #expect(phase.downloads == phase.expectedDownloads, "\(phase.failures)")
            #expect(phase.failedSessions == 0 && phase.skipped == 0, "\(phase.failures)")
            #expect(phase.download.count == UInt64(phase.downloads))
            #expect(phase.isComplete)
            let report = generator.report(workload: "T", phases: [phase])
            #expect(report.sessionsActive == 6)
            #expect(report.descriptorLimit > 0)
        } catch {
            try await server.tearDown()
            throw error
        }
        try await server.tearDown()
    }

    @Test func aServerThatIsNotThereFailsTheStartWithAReason() async throws {
        let configuration = LoadGenerator.Configuration(baseURLs: ["http://127.0.0.1:1"], appID: "load", sessions: 1, connections: 1)
        await #expect(throws: (any Error).self) { try await LoadGenerator.connect(configuration) }
    }
}
