import Foundation
import RoostStore

/// Which objects refer to which blob, derived from the documents: a member whose value is
/// `{"blob": {"sha256": …}}` is a reference. The core lets only the blob endpoints write such
/// values, so the documents are the source of truth and this table their index.
extension SQLObjectStore where Database == SQLiteDatabase {
    static var blobMigrations: [Migration] {
        [
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
    }
}
