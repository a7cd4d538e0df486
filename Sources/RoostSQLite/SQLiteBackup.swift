import CSQLite
import Foundation
import RoostStore

#if canImport(Glibc)
    import Glibc
#endif

/// Online copies of a data folder: the database through SQLite's backup API inside one read
/// transaction (a consistent snapshot, while writers carry on), then the blob files that
/// snapshot refers to.
public enum SQLiteBackup {
    /// What a copied database holds.
    public struct DatabaseCopy: Sendable {
        public let bytes: Int
        public let schema: SchemaStatus
        /// The blobs the copy refers to (or that uploads in flight had claimed).
        public let blobDigests: [String]
    }

    /// The blob files copied beside a database.
    public struct BlobCopy: Sendable, Equatable {
        public var linked = 0
        public var copied = 0
        public var bytes = 0
        /// Referenced blobs whose file was not in the source folder.
        public var missing: [String] = []
    }

    /// Pages copied per step of the backup API, between progress reports.
    static let pagesPerStep: Int32 = 256

    /// Copies the database at `source` into a new file `destination` (0600) as of one moment,
    /// leaving the copy in rollback-journal mode (one self-contained file) and checked with
    /// `PRAGMA integrity_check`. `progress` gets pages copied and the total.
    public static func copyDatabase(
        from source: String, to destination: String, progress: (Int, Int) -> Void = { _, _ in }
    ) throws -> DatabaseCopy {
        guard access(source, R_OK) == 0 else {
            throw SQLiteError(code: SQLITE_CANTOPEN, message: "cannot read \(source)")
        }
        let partial = destination + ".partial"
        let descriptor = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw SQLiteError(
                code: SQLITE_CANTOPEN,
                message: "cannot create \(partial): \(String(cString: strerror(errno)))")
        }
        close(descriptor)
        do {
            let reader = try SQLiteConnection(path: source, readOnly: true)
            defer { reader.close() }
            // The read transaction pins one snapshot for every step: the copy never restarts
            // because of writes, and it is as of the moment the transaction began.
            try reader.execute("BEGIN")
            _ = try reader.first("SELECT count(*) FROM sqlite_schema") { $0.integer(0) }
            let target = try SQLiteConnection(path: partial)
            defer { target.close() }
            try step(from: reader, to: target, progress: progress)
            try reader.execute("COMMIT")
            try target.execute("PRAGMA journal_mode = DELETE")
            let problems = try integrityProblems(target)
            guard problems.isEmpty else {
                throw SQLiteError(
                    code: SQLITE_CORRUPT, message: "the copy fails its integrity check: \(problems.prefix(5))"
                )
            }
            let schema = try SQLiteMigrator(migrations: SQLiteStorage.migrations).status(target)
            let digests = try referencedBlobs(target)
            target.close()
            try flush(partial)
            guard rename(partial, destination) == 0 else {
                throw SQLiteError(code: SQLITE_IOERR, message: "cannot rename \(partial) to \(destination)")
            }
            try flush((destination as NSString).deletingLastPathComponent)
            return DatabaseCopy(bytes: WALPolicy.size(of: destination), schema: schema, blobDigests: digests)
        } catch {
            unlink(partial)
            unlink(partial + "-journal")
            throw error
        }
    }

    private static func step(
        from reader: SQLiteConnection, to target: SQLiteConnection, progress: (Int, Int) -> Void
    ) throws {
        guard let backup = sqlite3_backup_init(target.rawHandle, "main", reader.rawHandle, "main") else {
            throw SQLiteError(
                code: sqlite3_errcode(target.rawHandle),
                message: String(cString: sqlite3_errmsg(target.rawHandle)))
        }
        var status: Int32
        repeat {
            status = sqlite3_backup_step(backup, pagesPerStep)
            let total = Int(sqlite3_backup_pagecount(backup))
            progress(total - Int(sqlite3_backup_remaining(backup)), total)
            if status == SQLITE_BUSY || status == SQLITE_LOCKED { usleep(10_000) }
        } while status == SQLITE_OK || status == SQLITE_BUSY || status == SQLITE_LOCKED
        sqlite3_backup_finish(backup)
        guard status == SQLITE_DONE else {
            throw SQLiteError(code: status, message: String(cString: sqlite3_errstr(status)))
        }
    }

    /// `PRAGMA integrity_check`'s findings; empty when it says "ok".
    public static func integrityProblems(_ connection: SQLiteConnection) throws -> [String] {
        let lines = try connection.query("PRAGMA integrity_check") { $0.text(0) ?? "" }
        return lines == ["ok"] ? [] : lines
    }

    /// Every blob digest the database refers to or has claimed for an upload in flight.
    static func referencedBlobs(_ connection: SQLiteConnection) throws -> [String] {
        let tables = Set(
            try connection.query("SELECT name FROM sqlite_schema WHERE type = 'table'") { $0.text(0) ?? "" })
        guard tables.contains("blob_refs") else { return [] }
        let claims = tables.contains("blob_claims") ? " UNION SELECT sha256 FROM blob_claims" : ""
        return try connection.query("SELECT sha256 FROM blob_refs\(raw: claims) ORDER BY 1") {
            $0.text(0) ?? ""
        }
    }

    /// Puts the blob files named by `digests` from the data folder `source` into the data folder
    /// `destination`: hard links where the file system allows (blob files never change), copies
    /// otherwise. `progress` gets files done and the total.
    public static func copyBlobs(
        _ digests: [String], from source: String, to destination: String,
        progress: (Int, Int) -> Void = { _, _ in }
    ) throws -> BlobCopy {
        let from = try FileBlobStorage(dataDirectory: source)
        let to = try FileBlobStorage(dataDirectory: destination)
        var report = BlobCopy()
        for (index, digest) in digests.enumerated() where FileBlobStorage.isDigest(digest) {
            defer { progress(index + 1, digests.count) }
            let origin = from.path(of: digest)
            let target = to.path(of: digest)
            var status = stat()
            guard stat(origin, &status) == 0 else {
                report.missing.append(digest)
                continue
            }
            let folder = (target as NSString).deletingLastPathComponent
            try FileBlobStorage.makeDirectory((folder as NSString).deletingLastPathComponent)
            try FileBlobStorage.makeDirectory(folder)
            report.bytes += Int(status.st_size)
            if link(origin, target) == 0 || errno == EEXIST {
                report.linked += 1
                continue
            }
            try copyFile(origin, to: target)
            report.copied += 1
        }
        return report
    }

    /// Copies a file to a new one (0600), flushed, under a temporary name until complete.
    static func copyFile(_ origin: String, to target: String) throws {
        let partial = target + ".partial"
        let input = open(origin, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw FileBlobStorage.failure("read \(origin)") }
        defer { close(input) }
        let output = open(partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw FileBlobStorage.failure("create \(partial)") }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = read(input, &buffer, buffer.count)
            if count == 0 { break }
            guard count > 0, buffer.withUnsafeBytes({ write(output, $0.baseAddress, count) }) == count else {
                let error = FileBlobStorage.failure("copy \(origin)")
                close(output)
                unlink(partial)
                throw error
            }
        }
        fsync(output)
        close(output)
        guard rename(partial, target) == 0 else { throw FileBlobStorage.failure("rename \(partial)") }
    }

    /// Ends every session in the database at `path` (a restored copy no server has open): a token
    /// revoked after the backup, a stolen one say, must not come back with it. Returns how many.
    public static func endSessions(databasePath path: String) throws -> Int {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        // A backup from before accounts existed has no tokens table.
        let tables = try connection.first(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'tokens'"
        ) { $0.integer(0) }
        guard tables == 1 else { return 0 }
        let ended = try connection.run("DELETE FROM tokens")
        connection.close()
        try flush(path)
        return ended
    }

    /// fsync on a file or folder, so a rename into it or its contents survive a power cut.
    static func flush(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileBlobStorage.failure("open \(path)") }
        fsync(descriptor)
        close(descriptor)
    }
}
