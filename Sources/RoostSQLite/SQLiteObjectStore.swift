import Foundation
import RoostQuery
import RoostStore

/// ``ObjectStore`` on the embedded SQLite database in the data folder.
public typealias SQLiteObjectStore = SQLObjectStore<SQLiteDatabase>

extension SQLObjectStore where Database == SQLiteDatabase {
    static var migrations: [Migration] {
        [
            Migration(
                version: 1, name: "objects",
                sql: """
                    CREATE TABLE objects (
                        id INTEGER PRIMARY KEY,
                        collection TEXT NOT NULL,
                        guid TEXT NOT NULL,
                        document TEXT NOT NULL,
                        created_by TEXT,
                        created_at INTEGER NOT NULL,
                        updated_by TEXT,
                        updated_at INTEGER NOT NULL,
                        version INTEGER NOT NULL
                    );
                    CREATE UNIQUE INDEX objects_by_guid ON objects (collection, guid);
                    CREATE INDEX objects_by_created ON objects (collection, created_at, guid);
                    CREATE INDEX objects_by_updated ON objects (collection, updated_at, guid);
                    """),
            // random(guid) draws row ids within a collection's range.
            Migration(
                version: 3, name: "objects by id",
                sql: "CREATE INDEX objects_by_id ON objects (collection, id);"),
            // Per-object access lists live beside the document; group membership is derived from
            // FFUserGroup objects so that a request finds its user's groups with one seek.
            Migration(
                version: 4, name: "access lists and group members",
                sql: """
                    ALTER TABLE objects ADD COLUMN acl TEXT;
                    CREATE TABLE group_members (
                        user_guid TEXT NOT NULL,
                        group_guid TEXT NOT NULL,
                        PRIMARY KEY (user_guid, group_guid)
                    ) WITHOUT ROWID;
                    CREATE INDEX group_members_by_group ON group_members (group_guid);
                    """ + groupMembersInsert(matching: "1").text + ";"),
        ]
    }

    /// Each reference's target, derived in Swift before the write (``ObjectReference``): queries
    /// through references seek it instead of parsing `ffUrl`s.
    static var referenceMigrations: [Migration] {
        [
            Migration(
                version: 29, name: "object references",
                sql: """
                    CREATE TABLE object_refs (
                        owner_collection TEXT NOT NULL,
                        owner_guid TEXT NOT NULL,
                        path TEXT NOT NULL,
                        target_collection TEXT NOT NULL,
                        target_guid TEXT NOT NULL,
                        PRIMARY KEY (owner_collection, owner_guid, path)
                    ) WITHOUT ROWID;
                    """, then: ObjectReferencesBackfill())
        ]
    }

    /// Rows of `group_members` for the groups matching `condition` (on `o`): each element of
    /// `users` that is a user guid or a reference to an `FFUser`. Migration 4's SQL, so the names
    /// are written out: what already ran never changes (writes derive the rows in ``DerivedRows``).
    static func groupMembersInsert(matching condition: SQL) -> SQL {
        """
        INSERT OR IGNORE INTO group_members (group_guid, user_guid)
        SELECT o.guid, CASE u.type WHEN 'text' THEN u.value ELSE substr(json_extract(u.value, '$.ffUrl'), 22) END
        FROM objects AS o, json_each(o.document, '$.users') AS u
        WHERE o.collection = 'FFUserGroup' AND \(condition)
        AND (u.type = 'text' OR (u.type = 'object' AND json_extract(u.value, '$.ffUrl') LIKE '/ff/resources/FFUser/%'))
        """
    }

    /// Opens `roost.sqlite` in `directory` on its own; ``SQLiteStorage`` opens it for every store.
    public convenience init(
        directory: String, collections: AccountCollections, durability: Durability = .normal
    ) throws {
        self.init(
            database: try SQLiteStorage.openDatabase(directory: directory, durability: durability),
            collections: collections)
    }
}

/// Field indexes are expression indexes on the JSON value, named `field:collection:path`, so
/// that equality and range queries on them seek instead of scan; the catalog lists them.
extension SQLiteConnection {
    public func createFieldIndex(_ index: FieldIndex, on field: FieldPath) throws {
        // Both names are validated identifiers, so writing them into the DDL is safe.
        try execute(
            """
            CREATE INDEX IF NOT EXISTS "\(index.name)"
            ON objects (collection, json_extract(document, \(SQLiteDialect.jsonPath(field))))
            """)
    }

    public func dropFieldIndex(_ index: FieldIndex) throws -> Bool {
        let exists =
            try first("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = \(index.name)") { _ in true
            }
            ?? false
        if exists { try execute("DROP INDEX \"\(index.name)\"") }
        return exists
    }

    public func fieldIndexes() throws -> [FieldIndex] {
        try query("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'field:%' ORDER BY name")
        {
            row -> FieldIndex? in
            let parts = (row.text(0) ?? "").split(separator: ":")
            guard parts.count == 3 else { return nil }
            return FieldIndex(name: row.text(0) ?? "", collection: String(parts[1]), field: String(parts[2]))
        }.compactMap { $0 }
    }
}
