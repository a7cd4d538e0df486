import Foundation

/// Rows kept in step with the objects: group members, blob references and claims, and the
/// blob collector's queries over them. The documents are the source of truth: a member whose
/// value is `{"blob": {"sha256": …}}` is a reference (the core lets only the blob endpoints
/// write such values), and `blob_refs` is their index.
extension SQLObjectStore {
    /// Writes the rows of a new object, or replaces those of a changed one.
    public static func writeDerived(
        _ derived: DerivedRows, collection: String, guid: String, replacing: Bool, on connection: Connection
    ) throws {
        if let members = derived.groupMembers {
            if replacing { try connection.run("DELETE FROM group_members WHERE group_guid = \(guid)") }
            for user in members {
                try connection.run(
                    """
                    INSERT INTO group_members (group_guid, user_guid) VALUES (\(guid), \(user))
                    ON CONFLICT DO NOTHING
                    """)
            }
        }
        if replacing {
            try connection.run("DELETE FROM blob_refs WHERE collection = \(collection) AND guid = \(guid)")
            try connection.run(
                "DELETE FROM object_refs WHERE owner_collection = \(collection) AND owner_guid = \(guid)")
        }
        try ObjectReference.insert(derived.references, collection: collection, guid: guid, on: connection)
        for reference in derived.blobReferences {
            // A collection removing this blob holds the exclusive lock until it commits.
            try connection.lock(.blob, reference.sha256, shared: true)
            try connection.run(
                """
                INSERT INTO blob_refs (collection, guid, member, sha256)
                VALUES (\(collection), \(guid), \(reference.member), \(reference.sha256))
                ON CONFLICT (collection, guid, member) DO UPDATE SET sha256 = excluded.sha256
                """)
        }
    }

    /// Removes the rows of a deleted object; a group's (`isGroup`) include its members.
    public static func removeDerived(
        collection: String, guid: String, isGroup: Bool, on connection: Connection
    )
        throws
    {
        if isGroup {
            try connection.run("DELETE FROM group_members WHERE group_guid = \(guid)")
        }
        try connection.run("DELETE FROM blob_refs WHERE collection = \(collection) AND guid = \(guid)")
        try connection.run(
            "DELETE FROM object_refs WHERE owner_collection = \(collection) AND owner_guid = \(guid)")
    }

    /// Every blob some object refers to.
    public func referencedBlobs() async throws -> Set<String> {
        try await database.pointRead { connection in
            Set(try connection.query("SELECT DISTINCT sha256 FROM blob_refs") { $0.text(0) ?? "" })
        }
    }

    public func claimBlob(_ sha256: String, at now: Int64) async throws {
        try await database.write { connection in
            try connection.run(
                """
                INSERT INTO blob_claims (sha256, claimed_at) VALUES (\(sha256), \(now))
                ON CONFLICT (sha256) DO UPDATE SET claimed_at = \(raw: Dialect.greatest)(blob_claims.claimed_at, excluded.claimed_at)
                """)
        }
    }

    /// Removes those of these blobs that are still unused: no object refers to them, no upload
    /// claimed them after `cutoff`, and their bytes have not changed since. Each digest is checked
    /// and removed in a write of its own under its exclusive lock (SQLite's one writer is that
    /// lock), so a write that would refer to it cannot commit in between, and no two locks are
    /// ever held together (no deadlock with writes): the one kind of write that touches files
    /// (a stat and an unlink a blob). Returns the removed.
    public func removeUnusedBlobs(
        _ digests: [String], unusedSince cutoff: Date, from storage: any BlobStorage
    )
        async throws -> Set<String>
    {
        let claimedAfter = Self.milliseconds(cutoff)
        var removed: Set<String> = []
        for sha256 in digests {
            let gone = try await database.write { connection in
                try connection.lock(.blob, sha256)
                let used =
                    try connection.first(
                        """
                        SELECT 1 FROM blob_refs WHERE sha256 = \(sha256)
                        UNION ALL SELECT 1 FROM blob_claims WHERE sha256 = \(sha256) AND claimed_at > \(claimedAfter)
                        LIMIT 1
                        """, { _ in true }) ?? false
                guard !used, let modified = try storage.modified(sha256), modified <= cutoff else {
                    return false
                }
                try storage.remove(sha256)
                return true
            }
            if gone { removed.insert(sha256) }
        }
        return removed
    }

    /// Forgets claims made before `cutoff`: their uploads have committed or died by now.
    public func forgetBlobClaims(madeBefore cutoff: Date) async throws {
        try await database.write { connection in
            try connection.run("DELETE FROM blob_claims WHERE claimed_at <= \(Self.milliseconds(cutoff))")
        }
    }

    /// How many members refer to this blob.
    public func referenceCount(of sha256: String) async throws -> Int {
        try await database.pointRead { connection in
            Int(
                try connection.first("SELECT count(*) FROM blob_refs WHERE sha256 = \(sha256)") {
                    $0.integer(0)
                } ?? 0)
        }
    }

    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }
}
