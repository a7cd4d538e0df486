import Foundation
import RoostStore
import RoostTestSupport
import Testing

@testable import RoostPostgres

@Suite("PostgreSQL driver: a server that goes away and comes back")
struct DriverRecoveryTests {
    @Test func jobsFailAsUnavailableWhileTheServerIsDownAndThePoolRecoversByItself() async throws {
        // A cluster of this test's own, since stopping the shared one would fail the others.
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("roost-pg-recovery-\(UUID().uuidString.prefix(8))").path
        let url = try runClusterScript(["start", folder])
        defer { _ = try? runClusterScript(["stop", folder]) }
        var configuration = try PostgresConfiguration(connectionString: url)
        configuration.poolSize = 2
        let database = try PostgresDatabase(configuration: configuration, migrations: [])
        let first = try await database.read { try $0.first("SELECT 1") { $0.integer(0) } }
        #expect(first == 1)

        try runClusterScript(["halt", folder])
        for _ in 0..<5 {
            let kind = await storeErrorKind { _ = try await database.read { try $0.execute("SELECT 1") } }
            #expect(kind == .unavailable)
        }
        let writeKind = await storeErrorKind { _ = try await database.write { try $0.execute("SELECT 1") } }
        #expect(writeKind == .unavailable)

        _ = try runClusterScript(["start", folder])
        try await waitUntil("the pool reconnects") {
            (try? await database.read { try $0.first("SELECT 1") { $0.integer(0) } }) == 1
        }
        // Every connection of the pool works again.
        let answers = try await withThrowingTaskGroup(of: Int64?.self) { group in
            for number in 0..<6 {
                group.addTask {
                    try await database.read { try $0.first("SELECT \(Int64(number))") { $0.integer(0) } }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.count == 6)
        await database.close()
    }

    @Test func aServerThatIsNotThereFailsTheStartAsAConnectionFailure() throws {
        let configuration = try PostgresConfiguration(
            connectionString: "postgresql:///postgres?host=/nonexistent-roost-folder&user=roost")
        do {
            _ = try PostgresDatabase(configuration: configuration, migrations: [])
            Issue.record("connected to nothing")
        } catch let error as PostgresError {
            #expect(error.isConnectionFailure)
            #expect(error.message.contains("cannot connect"))
        }
    }
}
