import Foundation
import RoostCore
import RoostSQLite
import RoostStore
import RoostTestSupport
import Testing

@testable import RoostPostgres

/// A database made by the previous release upgrades on both drivers with nothing lost: the
/// dumps in `Fixtures/` (``ReleaseFixture``) are loaded into a fresh database, which this build
/// then opens, migrates and reads.
@Suite("Upgrade from release 0.1.0 on both backends")
struct UpgradeFromReleaseTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    static func dump(_ backend: Backend) -> URL {
        fixtures.appendingPathComponent("release-0.1.0-\(backend.rawValue).sql")
    }

    @Test("the release's database opens, migrates and keeps every row", arguments: Backend.allCases)
    func upgrade(_ backend: Backend) async throws {
        let dump = try String(contentsOf: Self.dump(backend), encoding: .utf8)
        switch backend {
        case .sqlite:
            let directory = NSTemporaryDirectory() + "roost-upgrade-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let connection = try SQLiteConnection(path: directory + "/" + SQLiteStorage.fileName)
            try connection.execute(dump)
            connection.close()
            let storage = try SQLiteStorage(directory: directory, collections: .builtIn)
            try await ReleaseFixture.verify(storage, backend: .sqlite)
            await storage.close()
        case .postgres:
            try await PostgresTestDatabase.with { test in
                let connection = try PostgresConnection(configuration: test.configuration)
                // pg_dump's `\restrict` lines are psql's, not SQL.
                try connection.execute(
                    dump.split(separator: "\n", omittingEmptySubsequences: false)
                        .filter { !$0.hasPrefix("\\") }.joined(separator: "\n"))
                connection.close()
                let storage = try PostgresStorage(
                    configuration: test.configuration, collections: .builtIn, listening: false)
                do {
                    try await ReleaseFixture.verify(storage, backend: .postgres)
                } catch {
                    await storage.close()
                    throw error
                }
                await storage.close()
            }
        }
    }

    /// Writes the dumps (run once, on the release, with ROOST_WRITE_UPGRADE_FIXTURES=1).
    @Test(
        "write the release's dumps",
        .enabled(if: ProcessInfo.processInfo.environment["ROOST_WRITE_UPGRADE_FIXTURES"] != nil))
    func writeFixtures() async throws {
        let directory = NSTemporaryDirectory() + "roost-fixture-" + UUID().uuidString
        let sqlite = try SQLiteStorage(directory: directory, collections: .builtIn)
        try await ReleaseFixture.populate(sqlite)
        await sqlite.close()
        try Self.run(
            "/usr/bin/sqlite3", [directory + "/" + SQLiteStorage.fileName, ".dump"], into: Self.dump(.sqlite))
        try await PostgresTestDatabase.with { test in
            let storage = try PostgresStorage(
                configuration: test.configuration, collections: .builtIn, listening: false)
            try await ReleaseFixture.populate(storage)
            await storage.close()
            try Self.run(
                "/usr/bin/pg_dump",
                [
                    "--inserts", "--no-owner", "--no-privileges", "--dbname",
                    test.configuration.connectionString,
                ],
                into: Self.dump(.postgres))
        }
    }

    static func run(_ tool: String, _ arguments: [String], into file: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        FileManager.default.createFile(atPath: file.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: file)
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }
}
