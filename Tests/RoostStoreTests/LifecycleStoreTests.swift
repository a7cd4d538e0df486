import Dispatch
import Foundation
import Synchronization
import Testing

@testable import RoostSQLite
@testable import RoostStore

private let table = Migration(
    version: 1, name: "t", sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, payload BLOB)")

private func rows(_ database: SQLiteDatabase) throws -> Int64 {
    try database.read { try $0.first("SELECT count(*) FROM t") { $0.integer(0) } ?? -1 }
}

private func insert(_ database: SQLiteDatabase, bytes: Int = 16) async throws {
    try await database.write { try $0.run("INSERT INTO t (payload) VALUES (\(randomblob: bytes))") }
}

extension SQL.Interpolation {
    /// `randomblob(n)`, for filler rows.
    fileprivate mutating func appendInterpolation(randomblob bytes: Int) {
        appendInterpolation(raw: "randomblob(\(bytes))")
    }
}

@Suite("SQLite database lifecycle")
struct LifecycleStoreTests {
    @Test("close commits the queued writes, then refuses writes and reads with StoreError.closed")
    func closeDrainsTheQueue() async throws {
        let path = temporaryDirectory() + "/db.sqlite"
        let database = try SQLiteDatabase(path: path, migrations: [table])
        let writes = (0..<50).map { _ in Task { try await insert(database) } }
        // Bounded: on a machine busy with the whole suite all 50 may be written before this task
        // runs again, and the queue is then empty for good (this loop once hung the suite).
        let deadline = ContinuousClock.now + .seconds(2)
        while database.queuedWriteCount == 0 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        await database.close()
        var acknowledged = 0
        for write in writes {
            do {
                try await write.value
                acknowledged += 1
            } catch StoreError.closed {}
        }
        await #expect(throws: StoreError.closed) { try await insert(database) }
        #expect(throws: StoreError.closed) { try rows(database) }
        await #expect(throws: StoreError.closed) { try await database.pooledRead { _ in 1 } }
        await database.close()  // a second close returns at once
        let reopened = try SQLiteDatabase(path: path, migrations: [table])
        #expect(try rows(reopened) == Int64(acknowledged))
        #expect(acknowledged > 0)
        await reopened.close()
    }

    @Test("closing every connection checkpoints the WAL and removes -wal and -shm")
    func closeRemovesTheWAL() async throws {
        let path = temporaryDirectory() + "/db.sqlite"
        let database = try SQLiteDatabase(path: path, migrations: [table])
        for _ in 0..<20 { try await insert(database, bytes: 4096) }
        _ = try rows(database)
        _ = try await database.pooledRead { try $0.first("SELECT count(*) FROM t") { $0.integer(0) } }
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        await database.close()
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: path + "-shm"))
    }

    @Test("with readers always in a transaction, the writer still keeps the WAL near its bound")
    func walStaysBoundedUnderContinuousReaders() async throws {
        let path = temporaryDirectory() + "/db.sqlite"
        let bound = 256 * 1024
        let database = try SQLiteDatabase(path: path, walCheckpointBytes: bound, migrations: [table])
        let stop = Atomic(false)
        let readersDone = DispatchGroup()
        // Two readers whose transactions overlap: at every moment one of them holds a snapshot,
        // which starves SQLite's passive auto-checkpoint.
        for offset in 0..<2 {
            readersDone.enter()
            Thread {
                defer { readersDone.leave() }
                guard let reader = try? SQLiteConnection(path: path, readOnly: true) else { return }
                usleep(UInt32(offset * 3000))
                while !stop.load(ordering: .relaxed) {
                    try? reader.execute("BEGIN")
                    _ = try? reader.first("SELECT count(*) FROM t") { $0.integer(0) }
                    usleep(6000)
                    try? reader.execute("COMMIT")
                }
                reader.close()
            }.start()
        }
        var largest = 0
        for _ in 0..<600 {
            try await insert(database, bytes: 8192)
            largest = max(largest, database.walBytes)
        }
        stop.store(true, ordering: .relaxed)
        readersDone.wait()
        // 600 commits of 8 KiB rows leave 7 to 10 MiB of WAL when nothing resets it; the bound plus
        // the commits made while readers delay a checkpoint stay far below that.
        #expect(largest < 4 * bound, "WAL reached \(largest) bytes")
        #expect(try rows(database) == 600)
        await database.close()
    }
}

@Suite("Schema versions and migrations")
struct UpgradeStoreTests {
    let second = Migration(version: 2, name: "u", sql: "CREATE TABLE u (id INTEGER PRIMARY KEY)")

    @Test("the database records its schema version and the build that last wrote it")
    func metaRecordsVersions() async throws {
        let path = temporaryDirectory() + "/db.sqlite"
        let database = try SQLiteDatabase(path: path, migrations: [table, second])
        let meta = try database.read {
            try $0.query("SELECT key, value FROM roost_meta ORDER BY key") { "\($0.text(0)!)=\($0.text(1)!)" }
        }
        #expect(meta == ["schema_version=2", "written_by=\(RoostRelease.version)"])
        await database.close()
    }

    @Test("a failing migration is rolled back whole and the database stays as it was")
    func failingMigrationLeavesTheDatabase() async throws {
        let path = temporaryDirectory() + "/db.sqlite"
        let first = try SQLiteDatabase(path: path, migrations: [table])
        try await insert(first)
        await first.close()
        let failing = Migration(
            version: 3, name: "fails halfway",
            sql: "CREATE TABLE half (x); INSERT INTO half VALUES (1); INSERT INTO missing VALUES (1);")
        #expect(throws: SQLiteError.self) {
            _ = try SQLiteDatabase(path: path, migrations: [table, second, failing])
        }
        let connection = try SQLiteConnection(path: path, readOnly: true)
        defer { connection.close() }
        let tables = try connection.query("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        {
            $0.text(0)!
        }
        // Migration 2 ran in its own transaction and stays; nothing of migration 3 does.
        #expect(tables == ["roost_meta", "roost_schema", "t", "u"])
        #expect(try connection.query("SELECT version FROM roost_schema") { $0.integer(0) } == [1, 2])
        #expect(
            try connection.first("SELECT value FROM roost_meta WHERE key = 'schema_version'") { $0.text(0) }
                == "2")
        #expect(try connection.first("SELECT count(*) FROM t") { $0.integer(0) } == 1)
    }

    @Test("a database with a migration this build does not know is refused, naming both versions")
    func newerSchemaIsRefused() async throws {
        let path = temporaryDirectory() + "/db.sqlite"
        let newer = try SQLiteDatabase(path: path, migrations: [table, second])
        await newer.close()
        do {
            _ = try SQLiteDatabase(path: path, migrations: [table])
            Issue.record("opened a newer database")
        } catch let error as SchemaTooNewError {
            #expect(error.databaseVersion == 2)
            #expect(error.knownVersion == 1)
            #expect(error.writtenBy == RoostRelease.version)
            #expect(error.description.contains("schema version 2"))
            #expect(error.description.contains("up to 1"))
        }
        // Nothing was written: the file still records version 2.
        let status = try SQLiteMigrator(migrations: [table]).status(
            SQLiteConnection(path: path, readOnly: true))
        #expect(status.applied == [1, 2])
        #expect(status.unknown == [2])
    }

    @Test("the status lists pending migrations in order without applying them")
    func statusListsPending() async throws {
        let path = temporaryDirectory() + "/db.sqlite"
        let database = try SQLiteDatabase(path: path, migrations: [table])
        await database.close()
        let third = Migration(version: 3, name: "w", sql: "CREATE TABLE w (id INTEGER)")
        let connection = try SQLiteConnection(path: path, readOnly: true)
        defer { connection.close() }
        let status = try SQLiteMigrator(migrations: [third, table, second]).status(connection)
        #expect(status.pending.map(\.version) == [2, 3])
        #expect(status.version == 1)
        #expect(status.knownVersion == 3)
        #expect(try connection.query("SELECT version FROM roost_schema") { $0.integer(0) } == [1])
    }
}
