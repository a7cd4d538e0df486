import Foundation
import RoostQuery
import RoostStore

/// ``ObjectStore`` on PostgreSQL, answering as ``SQLiteObjectStore`` does.
///
/// Writes run in READ COMMITTED transactions guarded by the object's version, so concurrent
/// instances never overwrite each other's changes; a page and its total share one snapshot.
public final class PostgresObjectStore: ObjectStore, FieldIndexStore, BlobReferenceStore {
    public let database: PostgresDatabase

    public init(database: PostgresDatabase) {
        self.database = database
    }

    static let columns =
        "collection, guid, document, created_by, created_at, updated_by, updated_at, version, acl"

    static func object(_ row: PostgresRow) -> StoredObject {
        StoredObject(
            collection: row.text(0) ?? "", guid: row.text(1) ?? "", document: row.bytes(2),
            createdBy: row.text(3), createdAt: row.integer(4), updatedBy: row.text(5),
            updatedAt: row.integer(6), version: row.integer(7), acl: row.isNull(8) ? nil : row.bytes(8))
    }

    /// Stores a new object and marks the request's idempotency key as run, in one transaction.
    public func insert(_ object: StoredObject, marking key: IdempotencyMark?) async throws {
        let derived = DerivedRows(of: object)
        try await database.write { connection in
            try Self.insert(object, derived: derived, on: connection)
            try PostgresIdempotencyStore.markRun(key, on: connection)
        }
    }

    /// Inserts inside a transaction the caller holds (accounts write users with their account).
    static func insert(_ object: StoredObject, derived: DerivedRows, on connection: PostgresConnection) throws
    {
        do {
            try connection.run(
                """
                INSERT INTO objects (collection, guid, document, created_by, created_at, updated_by, updated_at, version, acl)
                VALUES (\(object.collection), \(object.guid), \(text(object.document)), \(object.createdBy),
                \(object.createdAt), \(object.updatedBy), \(object.updatedAt), \(object.version), \(text(object.acl)))
                """)
        } catch let error as PostgresError where error.isUniqueViolation {
            throw StoreError.duplicate
        }
        try writeDerived(
            derived, collection: object.collection, guid: object.guid, replacing: false, on: connection)
    }

    public func object(in collection: String, guid: String) async throws -> StoredObject? {
        try await database.read { connection in try Self.object(in: collection, guid: guid, on: connection) }
    }

    static func object(in collection: String, guid: String, on connection: PostgresConnection) throws
        -> StoredObject?
    {
        try connection.first(
            "SELECT \(raw: columns) FROM objects WHERE collection = \(collection) AND guid = \(guid)", object)
    }

    public func objects(in collection: String, guids: [String], restriction: QueryExpression?) async throws
        -> [String: [UInt8]]
    {
        guard !guids.isEmpty else { return [:] }
        let condition = try Self.condition(collection, nil, restriction)
        let read = { @Sendable (connection: PostgresConnection) throws -> [String: [UInt8]] in
            var result: [String: [UInt8]] = [:]
            for start in stride(from: 0, to: guids.count, by: Self.chunk) {
                let chunk = guids[start..<min(start + Self.chunk, guids.count)]
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
        // Several chunks read one snapshot, as SQLite's transaction does.
        return try await Self.refusingBadPatterns {
            guids.count > Self.chunk ? try await database.snapshotRead(read) : try await database.read(read)
        }
    }

    /// Guids per statement in ``objects(in:guids:restriction:)``.
    static let chunk = 500

    public func update(_ next: StoredObject, expectedVersion: Int64, marking key: IdempotencyMark?)
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
            try PostgresIdempotencyStore.markRun(key, on: connection)
            try Self.writeDerived(
                derived, collection: next.collection, guid: next.guid, replacing: true, on: connection)
        }
    }

    public func delete(
        in collection: String, guid: String, expectedVersion: Int64, marking key: IdempotencyMark?,
        by actor: String?
    )
        async throws
    {
        try await database.write { connection in
            // The change-log trigger runs at COMMIT and reads it from there. Set even when empty, so
            // a role's or session's default never stands for who deleted; local to this transaction.
            _ = try connection.first("SELECT set_config('roost.actor', \(actor ?? ""), true)") { _ in true }
            let changed = try connection.run(
                """
                DELETE FROM objects WHERE collection = \(collection) AND guid = \(guid)
                AND version = \(expectedVersion)
                """)
            guard changed == 1 else { throw try Self.missedWrite(collection, guid, on: connection) }
            try PostgresIdempotencyStore.markRun(key, on: connection)
            try Self.removeDerived(collection: collection, guid: guid, on: connection)
        }
    }

    /// Why a write guarded by a version changed no row: the object is gone, or has moved on.
    private static func missedWrite(_ collection: String, _ guid: String, on connection: PostgresConnection)
        throws -> StoreError
    {
        let exists =
            try connection.first(
                "SELECT 1 FROM objects WHERE collection = \(collection) AND guid = \(guid)", { _ in true })
            ?? false
        return exists ? .versionChanged : .notFound
    }

    public func list(_ request: ListRequest) async throws -> ListPage {
        var order: [SQL] = request.sort.flatMap { Self.sortExpressions($0.field, descending: $0.descending) }
        // Ties break on guid in the direction of the last key, as in SQLite.
        order.append(
            request.sort.isEmpty ? "id ASC" : request.sort.last!.descending ? "guid DESC" : "guid ASC")
        let condition = try Self.condition(
            request.collection, request.filter, request.restriction, references: request.references)
        let sql: SQL = """
            SELECT document FROM objects WHERE \(condition)
            ORDER BY \(SQL.joined(order, separator: ", ")) LIMIT \(request.count) OFFSET \(request.start)
            """
        guard request.includeTotal else {
            return try await Self.refusingBadPatterns {
                try await database.read { connection in
                    ListPage(documents: try connection.query(sql) { $0.bytes(0) }, total: nil)
                }
            }
        }
        return try await Self.refusingBadPatterns {
            try await database.snapshotRead { connection in
                let documents = try connection.query(sql) { $0.bytes(0) }
                let total = try connection.first("SELECT count(*) FROM objects WHERE \(condition)") {
                    Int($0.integer(0))
                }
                return ListPage(documents: documents, total: total)
            }
        }
    }

    /// Uniform without sorting the matches, as SQLite does it: draw ids in the collection's id
    /// range and keep the first that exists and matches; when matches are sparse, count them and
    /// take one at a random offset.
    public func randomPick(_ request: ListRequest) async throws -> ListPage {
        let condition = try Self.condition(
            request.collection, request.filter, request.restriction, references: request.references)
        let (collection, includeTotal) = (request.collection, request.includeTotal)
        let pick = { @Sendable (connection: PostgresConnection) throws -> ListPage in
            let document = try Self.randomDocument(in: collection, matching: condition, on: connection)
            let total =
                includeTotal
                ? try connection.first("SELECT count(*) FROM objects WHERE \(condition)") {
                    Int($0.integer(0))
                }
                : nil
            return ListPage(documents: document.map { [$0] } ?? [], total: total)
        }
        return try await Self.refusingBadPatterns {
            includeTotal ? try await database.snapshotRead(pick) : try await database.read(pick)
        }
    }

    private static func randomDocument(
        in collection: String, matching condition: SQL, on connection: PostgresConnection
    ) throws -> [UInt8]? {
        guard
            let (low, high) = try connection.first(
                "SELECT min(id), max(id) FROM objects WHERE collection = \(collection)",
                { row in row.isNull(0) ? nil : (row.integer(0), row.integer(1)) }) ?? nil
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

    /// A read whose regular expression PostgreSQL refuses only when it compiles it (ICU accepts a
    /// back reference before its group, for one): a query error, as a pattern refused earlier is.
    static func refusingBadPatterns<T>(_ read: () async throws -> T) async throws -> T {
        do {
            return try await read()
        } catch let error as PostgresError where error.sqlState == "2201B" {
            throw QueryError(
                message: "this database cannot run this regular expression", column: 1, query: "",
                expected: ["regular expression"])
        }
    }

    /// Draws before falling back to counting, as in SQLite's store.
    static let randomDraws = 32

    static func condition(
        _ collection: String, _ filter: QueryExpression?, _ restriction: QueryExpression? = nil,
        references: ReferenceAccess? = nil
    ) throws -> SQL {
        var condition: SQL = "collection = \(collection)"
        if let filter {
            condition =
                condition + " AND " + (try PostgresQueryCompiler.condition(filter, references: references))
        }
        if let restriction {
            condition =
                condition + " AND " + (try PostgresQueryCompiler.condition(restriction, references: nil))
        }
        return condition
    }

    public func accessFacts(userGuid: String) async throws -> UserAccessFacts? {
        try await database.read { connection in
            try connection.first(
                """
                SELECT coalesce(doc -> 'admin' = 'true'::jsonb, false),
                (doc -> 'active') IS DISTINCT FROM 'false'::jsonb,
                (SELECT string_agg(group_guid, chr(31) ORDER BY group_guid) FROM group_members WHERE user_guid = \(userGuid))
                FROM objects WHERE collection = 'FFUser' AND guid = \(userGuid)
                """
            ) { row in
                UserAccessFacts(
                    isAdmin: row.bool(0), isActive: row.bool(1),
                    groups: (row.text(2) ?? "").split(separator: "\u{1F}").map(String.init))
            }
        }
    }

    /// The ORDER BY terms of one sort key, in the order SQLite's `json_extract` values sort:
    /// missing and null first, then numbers and booleans (as 0 and 1) by value, then strings,
    /// arrays and objects by their text in byte order. Numbers order by the double SQLite reads,
    /// then, for integers of equal doubles, exactly. Metadata sorts on its column.
    static func sortExpressions(_ field: FieldPath, descending: Bool) -> [SQL] {
        let direction = descending ? " DESC NULLS LAST" : " ASC NULLS FIRST"
        let columns = [
            "guid": "guid", "createdAt": "created_at", "updatedAt": "updated_at", "createdBy": "created_by",
            "updatedBy": "updated_by", "version": "version",
        ]
        if field.components.count == 1, let column = columns[field.components[0]] {
            return [SQL(stringLiteral: column + direction)]
        }
        let value = "(doc #> \(PostgresQueryCompiler.jsonPath(field)))"
        let keys = [
            "(CASE jsonb_typeof(\(value)) WHEN 'number' THEN 1 WHEN 'boolean' THEN 1 WHEN 'string' THEN 2 WHEN 'array' THEN 2 WHEN 'object' THEN 2 ELSE 0 END)",
            "(CASE jsonb_typeof(\(value)) WHEN 'number' THEN roost_float8(\(value)) WHEN 'boolean' THEN (CASE WHEN \(value) = 'true'::jsonb THEN 1 ELSE 0 END) END)",
            // Ties of the double broken exactly, as SQLite compares integers (booleans are 0 and 1).
            """
            (CASE WHEN jsonb_typeof(\(value)) = 'boolean' THEN (CASE WHEN \(value) = 'true'::jsonb THEN 1 ELSE 0 END) \
            WHEN roost_is_integer(\(value)) THEN \(value)::numeric \
            WHEN roost_float8(\(value)) = trunc(roost_float8(\(value))) AND abs(roost_float8(\(value))) < 9.2e18 \
            THEN roost_float8(\(value))::int8::numeric END)
            """,
            "(CASE jsonb_typeof(\(value)) WHEN 'string' THEN \(value) #>> '{}' WHEN 'array' THEN \(value)::text WHEN 'object' THEN \(value)::text END) COLLATE \"C\"",
        ]
        return keys.map { SQL(stringLiteral: $0 + direction) }
    }

    static func text(_ bytes: [UInt8]) -> DatabaseValue {
        .text(String(decoding: bytes, as: UTF8.self))
    }

    static func text(_ bytes: [UInt8]?) -> DatabaseValue {
        bytes.map(text) ?? .null
    }
}
