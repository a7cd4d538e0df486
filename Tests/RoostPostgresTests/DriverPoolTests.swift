import Foundation
import RoostStore
import RoostTestSupport
import Testing

@testable import RoostPostgres

@Suite("PostgreSQL driver: pool, deadlines, cancellation")
struct DriverPoolTests {
    @Test func theStatementTimeoutIsAStoreTimeout() async throws {
        try await withTestDatabase({ $0.statementTimeout = .milliseconds(200) }) { database, _ in
            let kind = await storeErrorKind {
                try await database.read { try $0.execute("SELECT pg_sleep(30)") }
            }
            #expect(kind == .timeout(.milliseconds(200)))
            // The connection is fine afterwards.
            let answer = try await database.read { try $0.first("SELECT 1") { $0.integer(0) } }
            #expect(answer == 1)
        }
    }

    @Test func cancellingTheTaskStopsTheRunningStatement() async throws {
        // The statement timeout is far longer than the sleep: only a cancel request stops it early.
        // The other tests here sleep at the same time on the same server: this sleep is marked,
        // so that the wait below sees this test's statement and no other's.
        let marker = UUID().uuidString
        let statement = "SELECT pg_sleep(60) -- \(marker)"
        try await withTestDatabase({ $0.statementTimeout = .seconds(120) }) { database, _ in
            let sleeper = Task {
                try await database.read { connection -> String in
                    do {
                        try connection.execute(statement)
                        return "finished"
                    } catch let error as PostgresError {
                        return error.sqlState ?? "no state"
                    }
                }
            }
            try await waitUntil("the sleep runs on the server") {
                try await database.read { connection in
                    try connection.first(
                        "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query = \(statement)"
                    ) { $0.integer(0) } == 1
                }
            }
            sleeper.cancel()
            let outcome = try await sleeper.value
            #expect(outcome == "57014")
        }
    }

    @Test func aCancelledJobStillQueuedFailsWithoutRunning() async throws {
        try await withTestDatabase({
            $0.poolSize = 1
            $0.statementTimeout = .seconds(120)
        }) { database, _ in
            let sleeper = Task { try await database.read { try $0.execute("SELECT pg_sleep(60)") } }
            try await waitUntil("the sleep runs") { database.pool.running == 1 }
            let queued = Task { try await database.write { try $0.execute("CREATE TABLE never (k bigint)") } }
            try await waitUntil("the write waits") { database.pool.waiting == 1 }
            queued.cancel()
            await #expect(throws: CancellationError.self) { try await queued.value }
            sleeper.cancel()
            _ = await sleeper.result
            let tables = try await database.read {
                try $0.first("SELECT count(*) FROM pg_tables WHERE tablename = 'never'") { $0.integer(0) }
            }
            #expect(tables == 0)
        }
    }

    @Test func aFullQueueAnswersBusy() async throws {
        try await withTestDatabase({
            $0.poolSize = 1
            $0.maxQueuedJobs = 1
            $0.statementTimeout = .seconds(120)
        }) { database, _ in
            let sleeper = Task { try await database.read { try $0.execute("SELECT pg_sleep(60)") } }
            try await waitUntil("the sleep runs") { database.pool.running == 1 }
            let queued = Task { try await database.read { try $0.first("SELECT 2") { $0.integer(0) } } }
            try await waitUntil("the second read waits") { database.pool.waiting == 1 }
            let kind = await storeErrorKind { _ = try await database.read { try $0.execute("SELECT 3") } }
            #expect(kind == .busy)
            sleeper.cancel()
            _ = await sleeper.result
            let second = try await queued.value
            #expect(second == 2)
        }
    }

    @Test func closeFinishesQueuedJobsThenRefusesNewOnes() async throws {
        try await PostgresTestDatabase.with { test in
            var configuration = test.configuration
            configuration.poolSize = 1
            let database = try PostgresDatabase(configuration: configuration, migrations: [])
            let jobs = (1...5).map { number in
                Task { try await database.read { try $0.first("SELECT \(Int64(number))") { $0.integer(0) } } }
            }
            await database.close()
            for (offset, job) in jobs.enumerated() {
                // A read queued before close ran; one queued after was refused as closed.
                switch await job.result {
                case .success(let value): #expect(value == Int64(offset + 1))
                case .failure(let error): #expect(error as? StoreError == .closed)
                }
            }
            let kind = await storeErrorKind { _ = try await database.read { try $0.execute("SELECT 1") } }
            #expect(kind == .closed)
        }
    }

    @Test func aTerminatedConnectionIsReplacedBeforeTheNextJob() async throws {
        try await withTestDatabase({ $0.poolSize = 1 }) { database, test in
            let before = try await database.read { try $0.first("SELECT pg_backend_pid()") { $0.integer(0) } }
            let other = try PostgresDatabase(configuration: test.configuration, migrations: [])
            // With a timeout, pg_terminate_backend returns once the backend has exited.
            let terminated = try await other.read {
                try $0.first("SELECT pg_terminate_backend(\(try #require(before))::int, 30000)") {
                    $0.bool(0)
                }
            }
            await other.close()
            #expect(terminated == true)
            // The idle connection's socket shows the server closed it: the pool reconnects before
            // the next job instead of failing it.
            try await database.write { try $0.execute("CREATE TABLE after_terminate (k bigint)") }
            let after = try await database.read { try $0.first("SELECT pg_backend_pid()") { $0.integer(0) } }
            #expect(after != nil && after != before)
        }
    }

    @Test func aJobThatMeetsAConnectionDyingUnderItFailsAsUnavailableAndThePoolRecovers() async throws {
        try await withTestDatabase({ $0.poolSize = 1 }) { database, _ in
            let kind = await storeErrorKind {
                try await database.read { connection in
                    try connection.execute("SELECT pg_terminate_backend(pg_backend_pid())")
                }
            }
            #expect(kind == .unavailable)
            let answer = try await database.read { try $0.first("SELECT 1") { $0.integer(0) } }
            #expect(answer == 1)
        }
    }
}
