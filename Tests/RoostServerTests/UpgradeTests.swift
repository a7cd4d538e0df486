import Foundation
import RoostSQLite
import RoostStore
import RoostTestSupport
import Testing

/// Issue 14, item 5: schema versions, `roost migrate` and refusing a newer database, on the real
/// binary.
@Suite("Upgrades")
struct UpgradeTests {
    var knownVersion: Int { SQLiteStorage.migrations.map(\.version).max() ?? 0 }

    /// A data folder whose database has only the first `count` migrations, as an older roost left it.
    func olderDataFolder(migrations count: Int) async throws -> String {
        let directory = TestServer.makeTemporaryDirectory()
        chmod(directory, 0o700)
        let sorted = SQLiteStorage.migrations.sorted { $0.version < $1.version }
        let database = try SQLiteDatabase(
            path: directory + "/roost.sqlite", migrations: Array(sorted.prefix(count)))
        await database.close()
        return directory
    }

    func recorded(_ directory: String) throws -> (versions: [Int64], meta: [String: String]) {
        let connection = try SQLiteConnection(path: directory + "/roost.sqlite", readOnly: true)
        defer { connection.close() }
        return (
            try connection.query("SELECT version FROM roost_schema ORDER BY version") { $0.integer(0) },
            Dictionary(
                uniqueKeysWithValues: try connection.query("SELECT key, value FROM roost_meta") {
                    ($0.text(0) ?? "", $0.text(1) ?? "")
                })
        )
    }

    @Test("migrate --dry-run lists the pending migrations and changes nothing; migrate applies them")
    func dryRunThenMigrate() async throws {
        let directory = try await olderDataFolder(migrations: 3)
        let pending = SQLiteStorage.migrations.sorted { $0.version < $1.version }.dropFirst(3)
        let path = directory + "/roost.sqlite"
        let dryRun = try await runRoost(["migrate", "--dry-run", "--data-dir", directory])
        #expect(dryRun.status == 0, "\(dryRun.errorOutput)")
        let expected =
            [
                "\(path): schema version 3, last written by roost \(RoostRelease.version); roost \(RoostRelease.version) knows schema versions up to \(knownVersion)",
                "\(pending.count) pending migration(s), each in its own transaction:",
            ]
            + pending.map { "  \($0.version)  \($0.name)" }
        #expect(dryRun.output == expected.joined(separator: "\n") + "\n")
        #expect(try recorded(directory).versions == [1, 2, 3])

        let migrate = try await runRoost(["migrate", "--data-dir", directory])
        #expect(migrate.status == 0, "\(migrate.errorOutput)")
        let lines = migrate.output.split(separator: "\n").map(String.init)
        #expect(
            lines.dropFirst().first
                == "[1/\(pending.count)] applying \(pending.first!.version) \(pending.first!.name)")
        #expect(lines.last == "migrated to schema version \(knownVersion)")
        let after = try recorded(directory)
        #expect(after.versions.map(Int.init) == SQLiteStorage.migrations.map(\.version).sorted())
        #expect(after.meta == ["schema_version": "\(knownVersion)", "written_by": RoostRelease.version])
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))

        let nothing = try await runRoost(["migrate", "--dry-run", "--data-dir", directory])
        #expect(nothing.output.hasSuffix("nothing to migrate\n"))
    }

    @Test("serve and migrate refuse a database from a newer schema, naming both versions, exit 78")
    func newerSchemaIsRefused() async throws {
        let directory = try await olderDataFolder(migrations: SQLiteStorage.migrations.count)
        let connection = try SQLiteConnection(path: directory + "/roost.sqlite")
        try connection.execute(
            """
            INSERT INTO roost_schema VALUES (99, 'from the future', 0);
            UPDATE roost_meta SET value = '9.9.9' WHERE key = 'written_by';
            UPDATE roost_meta SET value = '99' WHERE key = 'schema_version';
            """)
        connection.close()
        let message =
            "the database \(directory)/roost.sqlite has schema version 99 (last written by roost 9.9.9), but roost "
            + "\(RoostRelease.version) knows schema versions up to \(knownVersion). Run a roost at least as new as "
            + "the one that wrote it, or restore a backup made by this version.\n"
        let serve = try await runProgram(
            "/usr/bin/timeout",
            [
                "20", try RoostProcess.binaryPath(), "serve", "--port", "0", "--data-dir", directory,
                "--access-log", "off",
            ])
        #expect(serve.status == 78)
        #expect(serve.errorOutput == "roost: cannot start: " + message)
        let migrate = try await runRoost(["migrate", "--data-dir", directory])
        #expect(migrate.status == 78)
        #expect(migrate.errorOutput == "roost: " + message)
        // Admin commands that open the database refuse it the same way.
        for command in [["index", "list"], ["users", "delete", "nobody"], ["blobs", "gc"]] {
            let result = try await runRoost(command + ["--data-dir", directory])
            #expect(result.status == 78, "\(command)")
            #expect(result.errorOutput == "roost: " + message, "\(command)")
        }
        // Nothing was rewritten: the newer build's record stands.
        #expect(try recorded(directory).meta == ["schema_version": "99", "written_by": "9.9.9"])
    }

    @Test("migrate refuses while a server holds the folder (exit 75) and without a database (exit 66)")
    func migrateRefusals() async throws {
        let missing = try await runRoost(["migrate", "--data-dir", TestServer.makeTemporaryDirectory()])
        #expect(missing.status == 66)
        #expect(missing.errorOutput.contains("there is no Roost database in"))
        let directory = try await olderDataFolder(migrations: 2)
        // Another process holding the data folder's lock, as a server does.
        let holder = try ChildProcess("/usr/bin/flock", [directory + "/roost.lock", "sleep", "30"])
        let refused = await eventually {
            (try? await runRoost(["migrate", "--data-dir", directory]))?.status == 75
        }
        holder.signal(SIGKILL)
        _ = try await holder.exit()
        #expect(refused)
        #expect(try recorded(directory).versions == [1, 2])
        let help = try await runRoost(["help", "migrate"])
        #expect(help.output.contains("roost migrate [--dry-run] [--data-dir PATH]"))
    }
}
