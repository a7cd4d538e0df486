import Foundation
import RoostStore
import RoostTestSupport
import Testing

@testable import RoostPostgres

@Suite("PostgreSQL driver: migrations")
struct DriverMigrationTests {
    static let migrations = [
        Migration(version: 1, name: "items", sql: "CREATE TABLE items (k bigint PRIMARY KEY)"),
        Migration(version: 2, name: "first item", sql: "INSERT INTO items VALUES (1)"),
    ]

    @Test func twoInstancesStartingTogetherApplyEachMigrationOnce() async throws {
        try await PostgresTestDatabase.with { test in
            let configuration = test.configuration
            let opened = try await withThrowingTaskGroup(of: PostgresDatabase.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        try PostgresDatabase(configuration: configuration, migrations: Self.migrations)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let database = try #require(opened.first)
            let (items, versions, meta) = try await database.read { connection in
                (
                    try connection.first("SELECT count(*) FROM items") { $0.integer(0) },
                    try connection.query("SELECT version, name FROM roost_schema ORDER BY version") {
                        "\($0.integer(0)) \($0.text(1) ?? "")"
                    },
                    try connection.query("SELECT key, value FROM roost_meta ORDER BY key") {
                        "\($0.text(0) ?? "")=\($0.text(1) ?? "")"
                    }
                )
            }
            for database in opened { await database.close() }
            #expect(items == 1)
            #expect(versions == ["1 items", "2 first item"])
            #expect(meta == ["schema_version=2", "written_by=\(RoostRelease.version)"])
        }
    }

    @Test func aDatabaseWithNewerMigrationsIsRefused() async throws {
        try await PostgresTestDatabase.with { test in
            let newer = try PostgresDatabase(configuration: test.configuration, migrations: Self.migrations)
            await newer.close()
            do {
                _ = try PostgresDatabase(configuration: test.configuration, migrations: [Self.migrations[0]])
                Issue.record("an older build opened a newer schema")
            } catch let error as SchemaTooNewError {
                #expect(error.databaseVersion == 2 && error.knownVersion == 1)
                #expect(error.writtenBy == RoostRelease.version)
            }
            let status = try PostgresDatabase.schemaStatus(
                configuration: test.configuration, migrations: [Self.migrations[0]])
            #expect(status.applied == [1, 2] && status.unknown == [2] && status.pending.isEmpty)
        }
    }

    @Test func aFailingMigrationIsRolledBackWholeAndStopsTheRest() async throws {
        let failing = [
            Self.migrations[0],
            Migration(version: 2, name: "half", sql: "CREATE TABLE half (k bigint); SELECT * FROM missing"),
            Migration(version: 3, name: "after", sql: "CREATE TABLE after (k bigint)"),
        ]
        try await PostgresTestDatabase.with { test in
            #expect(throws: PostgresError.self) {
                _ = try PostgresDatabase(configuration: test.configuration, migrations: failing)
            }
            let status = try PostgresDatabase.schemaStatus(
                configuration: test.configuration, migrations: failing)
            #expect(status.applied == [1])
            #expect(status.pending.map(\.version) == [2, 3])
            let database = try PostgresDatabase(configuration: test.configuration, migrations: [])
            let tables = try await database.read {
                try $0.query("SELECT tablename FROM pg_tables WHERE tablename IN ('half', 'after')") {
                    $0.text(0)
                }
            }
            await database.close()
            #expect(tables.isEmpty)
        }
    }
}
