import Foundation
import RoostQuery
import RoostStore

/// ``ObjectStore`` on an embedded SQLite database in the data folder.
public final class SQLiteObjectStore: ObjectStore, FieldIndexStore, BlobReferenceStore {
    public let database: SQLiteDatabase

    static let migrations = [
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
            version: 3, name: "objects by id", sql: "CREATE INDEX objects_by_id ON objects (collection, id);"),
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

    /// The collection whose objects define groups.
    public static let groupCollection = "FFUserGroup"

    /// Rows of `group_members` for the groups matching `condition` (on `o`): each element of
    /// `users` that is a user guid or a reference to an `FFUser`.
    static func groupMembersInsert(matching condition: SQL) -> SQL {
        """
        INSERT OR IGNORE INTO group_members (group_guid, user_guid)
        SELECT o.guid, CASE u.type WHEN 'text' THEN u.value ELSE substr(json_extract(u.value, '$.ffUrl'), 22) END
        FROM objects AS o, json_each(o.document, '$.users') AS u
        WHERE o.collection = '\(raw: groupCollection)' AND \(condition)
        AND (u.type = 'text' OR (u.type = 'object' AND json_extract(u.value, '$.ffUrl') LIKE '/ff/resources/FFUser/%'))
        """
    }

    /// Opens `roost.sqlite` in `directory` on its own; ``SQLiteStorage`` opens it for every store.
    public convenience init(directory: String, durability: Durability = .normal) throws {
        self.init(database: try SQLiteStorage.openDatabase(directory: directory, durability: durability))
    }

    /// Uses a database that is already open and migrated.
    public init(database: SQLiteDatabase) {
        self.database = database
    }

    private static let columns =
        "collection, guid, document, created_by, created_at, updated_by, updated_at, version, acl"

    private static func object(_ row: Row) -> StoredObject {
        StoredObject(
            collection: row.text(0) ?? "", guid: row.text(1) ?? "", document: row.bytes(2),
            createdBy: row.text(3),
            createdAt: row.integer(4), updatedBy: row.text(5), updatedAt: row.integer(6),
            version: row.integer(7), acl: row.isNull(8) ? nil : row.bytes(8))
    }

    public func insert(_ object: StoredObject, marking mark: IdempotencyMark?) async throws {
        let derived = DerivedRows(of: object)
        try await database.write { connection in
            try Self.insert(object, derived: derived, on: connection)
            try SQLiteIdempotencyStore.markRun(mark, on: connection)
        }
    }

    /// Inserts inside a write the caller already holds, so other stores can write objects atomically.
    /// `derived` is computed before the write, so that the writer parses no JSON.
    static func insert(_ object: StoredObject, derived: DerivedRows, on connection: SQLiteConnection)
        throws
    {
        do {
            try connection.run(
                """
                INSERT INTO objects (collection, guid, document, created_by, created_at, updated_by, updated_at, version, acl)
                VALUES (\(object.collection), \(object.guid), \(Self.text(object.document)), \(object.createdBy),
                \(object.createdAt), \(object.updatedBy), \(object.updatedAt), \(object.version), \(Self.text(object.acl)))
                """)
        } catch let error as SQLiteError where error.isUniqueViolation {
            throw StoreError.duplicate
        }
        try derived.write(collection: object.collection, guid: object.guid, replacing: false, on: connection)
    }

    public func object(in collection: String, guid: String) async throws -> StoredObject? {
        try database.read { connection in try Self.object(in: collection, guid: guid, on: connection) }
    }

    public func objects(in collection: String, guids: [String], restriction: QueryExpression?) async throws
        -> [String: [UInt8]]
    {
        guard !guids.isEmpty else { return [:] }
        let condition = try Self.condition(collection, nil, restriction)
        return try await database.pooledRead(transaction: guids.count > 500) { connection in
            var result: [String: [UInt8]] = [:]
            // SQLite allows 32,766 parameters; stay far below with chunks of 500.
            for start in stride(from: 0, to: guids.count, by: 500) {
                let chunk = guids[start..<min(start + 500, guids.count)]
                let list = SQL.joined(chunk.map { "\($0)" }, separator: ", ")
                for (guid, document) in try connection.query(
                    "SELECT guid, document FROM objects WHERE \(condition) AND guid IN (\(list))",
                    { ($0.text(0) ?? "", $0.bytes(1)) })
                {
                    result[guid] = document
                }
            }
            return result
        }
    }

    /// The object as stored, read on a connection the caller holds.
    static func object(in collection: String, guid: String, on connection: SQLiteConnection) throws
        -> StoredObject?
    {
        try connection.first(
            "SELECT \(raw: columns) FROM objects WHERE collection = \(collection) AND guid = \(guid)", object)
    }

    public func update(_ next: StoredObject, expectedVersion: Int64, marking mark: IdempotencyMark?)
        async throws
    {
        let derived = DerivedRows(of: next)
        try await database.write { connection in
            let changed = try connection.run(
                """
                UPDATE objects SET document = \(Self.text(next.document)), updated_by = \(next.updatedBy),
                updated_at = \(next.updatedAt), version = \(next.version), acl = \(Self.text(next.acl))
                WHERE collection = \(next.collection) AND guid = \(next.guid) AND version = \(expectedVersion)
                """)
            guard changed == 1 else { throw try Self.missedWrite(next.collection, next.guid, on: connection) }
            try SQLiteIdempotencyStore.markRun(mark, on: connection)
            try derived.write(collection: next.collection, guid: next.guid, replacing: true, on: connection)
        }
    }

    public func delete(
        in collection: String, guid: String, expectedVersion: Int64, marking mark: IdempotencyMark?,
        by actor: String?
    ) async throws {
        try await database.write { connection in
            let changed = try connection.run(
                """
                DELETE FROM objects WHERE collection = \(collection) AND guid = \(guid)
                AND version = \(expectedVersion)
                """)
            guard changed == 1 else { throw try Self.missedWrite(collection, guid, on: connection) }
            if let actor {
                // The trigger's entry for this delete: the newest delete of this object. Read from
                // the log's end, where the trigger just wrote it, so the writer never scans the log.
                try connection.run(
                    """
                    UPDATE changes SET actor = \(actor) WHERE seq = (
                        SELECT seq FROM changes
                        WHERE collection = \(collection) AND guid = \(guid) AND operation = 'delete'
                        ORDER BY seq DESC LIMIT 1)
                    """)
            }
            try SQLiteIdempotencyStore.markRun(mark, on: connection)
            try DerivedRows.remove(collection: collection, guid: guid, on: connection)
        }
    }

    /// Why a write guarded by a version changed no row: the object is gone, or has moved on.
    private static func missedWrite(_ collection: String, _ guid: String, on connection: SQLiteConnection)
        throws -> StoreError
    {
        let exists =
            try connection.first(
                "SELECT 1 FROM objects WHERE collection = \(collection) AND guid = \(guid)", { _ in true })
            ?? false
        return exists ? .versionChanged : .notFound
    }

    public func list(_ request: ListRequest) async throws -> ListPage {
        var order: [SQL] = request.sort.map { key in
            let direction = key.descending ? " DESC" : " ASC"
            return Self.sortExpression(key.field) + SQL(stringLiteral: direction)
        }
        // Ties break on guid in the direction of the last key, so an index can serve the whole order.
        order.append(
            request.sort.isEmpty ? "id ASC" : request.sort.last!.descending ? "guid DESC" : "guid ASC")
        let condition = try Self.condition(
            request.collection, request.filter, request.restriction, references: request.references)
        let sql: SQL = """
            SELECT document FROM objects WHERE \(condition)
            ORDER BY \(SQL.joined(order, separator: ", ")) LIMIT \(request.count) OFFSET \(request.start)
            """
        // With a total, one transaction: the page and its total agree.
        let includeTotal = request.includeTotal
        let inline = Self.measuredBySteps(request)
        return try await database.pooledRead(transaction: includeTotal, inline: inline) { connection in
            let documents = try connection.query(sql) { $0.bytes(0) }
            var total: Int?
            if includeTotal {
                total = try connection.first("SELECT count(*) FROM objects WHERE \(condition)") {
                    Int($0.integer(0))
                }
            }
            return ListPage(documents: documents, total: total)
        }
    }

    /// Uniform without sorting the matches: draw row ids in the collection's id range and keep the
    /// first that exists and matches (each match is equally likely on every draw). When matches are
    /// sparse in that range, count them and take one at a random offset instead.
    public func randomPick(_ request: ListRequest) async throws -> ListPage {
        let condition = try Self.condition(
            request.collection, request.filter, request.restriction, references: request.references)
        let (collection, includeTotal) = (request.collection, request.includeTotal)
        // The draws need no snapshot (a row deleted meanwhile is a miss); a total must agree.
        let inline = Self.measuredBySteps(request)
        return try await database.pooledRead(transaction: includeTotal, inline: inline) { connection in
            let document = try Self.randomDocument(in: collection, matching: condition, on: connection)
            let total =
                includeTotal
                ? try connection.first("SELECT count(*) FROM objects WHERE \(condition)") {
                    Int($0.integer(0))
                }
                : nil
            return ListPage(documents: document.map { [$0] } ?? [], total: total)
        }
    }

    /// Uniform without sorting the matches: draw row ids in the collection's id range and keep the
    /// first that exists and matches (each match is equally likely on every draw). When matches are
    /// sparse in that range, count them and take one at a random offset instead.
    private static func randomDocument(
        in collection: String, matching condition: SQL, on connection: SQLiteConnection
    ) throws -> [UInt8]? {
        guard
            let (low, high) = try connection.first(
                "SELECT (SELECT min(id) FROM objects WHERE collection = \(collection)), (SELECT max(id) FROM objects WHERE collection = \(collection))",
                { row in
                    row.isNull(0) ? nil : (row.integer(0), row.integer(1))
                }) ?? nil
        else { return nil }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<Self.randomDraws {
            let id = Int64.random(in: low...high, using: &generator)
            if let document = try connection.first(
                "SELECT document FROM objects WHERE id = \(id) AND \(condition)", { $0.bytes(0) })
            {
                return document
            }
        }
        let count =
            try connection.first("SELECT count(*) FROM objects WHERE \(condition)") { $0.integer(0) } ?? 0
        guard count > 0 else { return nil }
        let offset = Int64.random(in: 0..<count, using: &generator)
        return try connection.first(
            "SELECT document FROM objects WHERE \(condition) ORDER BY id LIMIT 1 OFFSET \(offset)",
            { $0.bytes(0) })
    }

    /// Whether SQLite's step count measures the read's cost, so that it may start on the calling
    /// thread: not when a regular expression runs, whose backtracking happens inside one step.
    static func measuredBySteps(_ request: ListRequest) -> Bool {
        [request.filter, request.restriction].allSatisfy { expression in
            expression.map { QueryShape($0).regularExpressions == 0 } ?? true
        }
    }

    /// Draws before falling back to counting: enough when at least a tenth of the range matches.
    static let randomDraws = 32

    static func condition(
        _ collection: String, _ filter: QueryExpression?, _ restriction: QueryExpression? = nil,
        references: ReferenceAccess? = nil
    ) throws -> SQL {
        var condition: SQL = "collection = \(collection)"
        if let filter {
            condition =
                condition + " AND " + (try SQLiteQueryCompiler.condition(filter, references: references))
        }
        if let restriction {
            condition =
                condition + " AND "
                + (try SQLiteQueryCompiler.condition(restriction, references: nil))
        }
        return condition
    }

    public func accessFacts(userGuid: String) async throws -> UserAccessFacts? {
        try database.read { connection in
            try connection.first(
                """
                SELECT json_extract(document, '$.admin') IS 1 AND json_type(document, '$.admin') = 'true',
                json_type(document, '$.active') IS NOT 'false',
                (SELECT group_concat(group_guid, char(31)) FROM group_members WHERE user_guid = \(userGuid))
                FROM objects WHERE collection = 'FFUser' AND guid = \(userGuid)
                """
            ) { row in
                UserAccessFacts(
                    isAdmin: row.integer(0) == 1, isActive: row.integer(1) == 1,
                    groups: (row.text(2) ?? "").split(separator: "\u{1F}").map(String.init))
            }
        }
    }

    /// Metadata sorts on its indexed column; anything else on the JSON value at that path.
    static func sortExpression(_ field: FieldPath) -> SQL {
        if field.components.count == 1 {
            switch field.components[0] {
            case "guid": return "guid"
            case "createdAt": return "created_at"
            case "updatedAt": return "updated_at"
            case "createdBy": return "created_by"
            case "updatedBy": return "updated_by"
            case "version": return "version"
            default: break
            }
        }
        return "json_extract(document, \(raw: SQLiteQueryCompiler.jsonPath(field)))"
    }

    private static func text(_ bytes: [UInt8]) -> DatabaseValue {
        .text(String(decoding: bytes, as: UTF8.self))
    }

    private static func text(_ bytes: [UInt8]?) -> DatabaseValue {
        bytes.map(text) ?? .null
    }
}

/// Expression indexes on JSON fields, so that equality and range queries on them seek instead of scan.
extension SQLiteObjectStore {
    /// Creates the index if it does not exist; the name is derived from collection and field.
    @discardableResult
    public func createIndex(collection: String, field: FieldPath) async throws -> FieldIndex {
        let index = Self.fieldIndex(collection: collection, field: field)
        // Both names are validated identifiers, so writing them into the DDL is safe.
        let sql = """
            CREATE INDEX IF NOT EXISTS "\(index.name)"
            ON objects (collection, json_extract(document, \(SQLiteQueryCompiler.jsonPath(field))))
            """
        try await database.write { connection in try connection.execute(sql) }
        return index
    }

    /// Drops the index of a field; false if there was none.
    public func dropIndex(collection: String, field: FieldPath) async throws -> Bool {
        let index = Self.fieldIndex(collection: collection, field: field)
        return try await database.write { connection in
            let exists =
                try connection.first(
                    "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = \(index.name)"
                ) { _ in true } ?? false
            if exists { try connection.execute("DROP INDEX \"\(index.name)\"") }
            return exists
        }
    }

    /// The field indexes, by name.
    public func fieldIndexes() async throws -> [FieldIndex] {
        try database.read { connection in
            try connection.query(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'field:%' ORDER BY name"
            ) {
                row -> FieldIndex? in
                let parts = (row.text(0) ?? "").split(separator: ":")
                guard parts.count == 3 else { return nil }
                return FieldIndex(
                    name: row.text(0) ?? "", collection: String(parts[1]), field: String(parts[2]))
            }.compactMap { $0 }
        }
    }

    static func fieldIndex(collection: String, field: FieldPath) -> FieldIndex {
        FieldIndex(collection: collection, field: field)
    }
}
