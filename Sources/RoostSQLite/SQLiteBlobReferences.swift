import Foundation
import RoostStore

/// Which objects refer to which blob, derived from the documents: a member whose value is
/// `{"blob": {"sha256": …}}` is a reference. The core lets only the blob endpoints write such
/// values, so the documents are the source of truth and this table their index.
extension SQLiteObjectStore {
    static let blobMigrations = [
        Migration(
            version: 6, name: "blob references",
            sql: """
                CREATE TABLE blob_refs (
                    collection TEXT NOT NULL,
                    guid TEXT NOT NULL,
                    member TEXT NOT NULL,
                    sha256 TEXT NOT NULL,
                    PRIMARY KEY (collection, guid, member)
                ) WITHOUT ROWID;
                CREATE INDEX blob_refs_by_sha256 ON blob_refs (sha256);
                """),
        // An upload that reuses a stored blob claims it before it writes the object that will
        // refer to it, so that collection cannot remove it in between.
        Migration(
            version: 8, name: "blob claims",
            sql: """
                CREATE TABLE blob_claims (
                    sha256 TEXT PRIMARY KEY,
                    claimed_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                """),
    ]

    /// Every blob some object refers to.
    public func referencedBlobs() async throws -> Set<String> {
        try database.read { connection in
            Set(try connection.query("SELECT DISTINCT sha256 FROM blob_refs") { $0.text(0) ?? "" })
        }
    }

    public func claimBlob(_ sha256: String, at now: Int64) async throws {
        _ = try await database.write { connection in
            try connection.run(
                """
                INSERT INTO blob_claims (sha256, claimed_at) VALUES (\(sha256), \(now))
                ON CONFLICT (sha256) DO UPDATE SET claimed_at = max(claimed_at, excluded.claimed_at)
                """)
        }
    }

    /// Removes those of these blobs that are still unused: no object refers to them, no upload
    /// claimed them after `cutoff`, and their file has not changed since. Each is checked and
    /// removed under the writer, so no write that refers to it commits in between: the one writer
    /// job that touches files (a stat and an unlink a blob). Returns the removed.
    public func removeUnusedBlobs(
        _ digests: [String], unusedSince cutoff: Date, from storage: any BlobStorage
    )
        async throws -> Set<String>
    {
        let claimedAfter = Self.milliseconds(cutoff)
        return try await database.write { connection in
            var removed: Set<String> = []
            for sha256 in digests {
                let used =
                    try connection.first(
                        """
                        SELECT 1 FROM blob_refs WHERE sha256 = \(sha256)
                        UNION ALL SELECT 1 FROM blob_claims WHERE sha256 = \(sha256) AND claimed_at > \(claimedAfter)
                        LIMIT 1
                        """, { _ in true }) ?? false
                guard !used, let modified = try storage.modified(sha256), modified <= cutoff else { continue }
                try storage.remove(sha256)
                removed.insert(sha256)
            }
            return removed
        }
    }

    /// Forgets claims made before `cutoff`: their uploads have committed or died by now.
    public func forgetBlobClaims(madeBefore cutoff: Date) async throws {
        try await database.write { connection in
            _ = try connection.run("DELETE FROM blob_claims WHERE claimed_at <= \(Self.milliseconds(cutoff))")
        }
    }

    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// How many members refer to this blob.
    public func referenceCount(of sha256: String) async throws -> Int {
        try database.read { connection in
            Int(
                try connection.first("SELECT count(*) FROM blob_refs WHERE sha256 = \(sha256)") {
                    $0.integer(0)
                } ?? 0)
        }
    }
}
