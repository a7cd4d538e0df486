import Foundation
import RoostQuery

/// ``ObjectStore`` written once, on any ``SQLDatabase``: SQLite's and PostgreSQL's objects
/// tables hold the same columns, and the dialect writes what differs.
///
/// Writes are guarded by the object's version, so concurrent writers never overwrite each
/// other's changes; a page and its total read one snapshot.
public final class SQLObjectStore<Database: SQLDatabase>: ObjectStore, FieldIndexStore, BlobReferenceStore {
    public typealias Connection = Database.Connection
    typealias Dialect = Connection.Dialect
    public let database: Database
    /// Which collections are users and groups: the domain's names.
    public let collections: AccountCollections

    /// Uses a database that is already open and migrated.
    public init(database: Database, collections: AccountCollections) {
        self.database = database
        self.collections = collections
    }

    private static var columns: String {
        "collection, guid, document, created_by, created_at, updated_by, updated_at, version, acl"
    }

    private static func object(_ row: Connection.ResultRow) -> StoredObject {
        StoredObject(
            collection: row.text(0) ?? "", guid: row.text(1) ?? "", document: row.bytes(2),
            createdBy: row.text(3), createdAt: row.integer(4), updatedBy: row.text(5),
            updatedAt: row.integer(6), version: row.integer(7), acl: row.isNull(8) ? nil : row.bytes(8))
    }

    public func insert(_ object: StoredObject, marking mark: IdempotencyMark?) async throws {
        let derived = try DerivedRows(of: object, collections: collections)
        try await database.write { connection in
            try Self.insert(object, derived: derived, on: connection)
            try Self.markRun(mark, on: connection)
        }
    }

    /// Inserts inside a write the caller already holds, so other stores can write objects
    /// atomically. `derived` is computed before the write, so that the writer parses no JSON.
    public static func insert(_ object: StoredObject, derived: DerivedRows, on connection: Connection) throws
    {
        do {
            try connection.run(
                """
                INSERT INTO objects (collection, guid, document, created_by, created_at, updated_by, updated_at, version, acl)
                VALUES (\(object.collection), \(object.guid), \(text(object.document)), \(object.createdBy),
                \(object.createdAt), \(object.updatedBy), \(object.updatedAt), \(object.version), \(text(object.acl)))
                """)
        } catch  where Connection.isUniqueViolation(error) {
            throw StoreError.duplicate
        }
        try writeDerived(
            derived, collection: object.collection, guid: object.guid, replacing: false, on: connection)
    }

    public func object(in collection: String, guid: String) async throws -> StoredObject? {
        try await database.pointRead { connection in
            try Self.object(in: collection, guid: guid, on: connection)
        }
    }

    /// The object as stored, read on a connection the caller holds.
    public static func object(in collection: String, guid: String, on connection: Connection) throws
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
        let chunk = Self.chunk
        // Several chunks read one snapshot.
        return try await database.pooledRead(consistent: guids.count > chunk, measuredBySteps: true) {
            connection in
            var result: [String: [UInt8]] = [:]
            // SQLite allows 32,766 parameters; stay far below.
            for start in stride(from: 0, to: guids.count, by: chunk) {
                let part = guids[start..<min(start + chunk, guids.count)]
                let list = SQL.joined(part.map { "\($0)" }, separator: ", ")
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

    /// Guids per statement in ``objects(in:guids:restriction:)``.
    static var chunk: Int { 500 }

    public func update(_ next: StoredObject, expectedVersion: Int64, marking mark: IdempotencyMark?)
        async throws
    {
        let derived = try DerivedRows(of: next, collections: collections)
        try await database.write { connection in
            let changed = try connection.run(
                """
                UPDATE objects SET document = \(Self.text(next.document)), updated_by = \(next.updatedBy),
                updated_at = \(next.updatedAt), version = \(next.version), acl = \(Self.text(next.acl))
                WHERE collection = \(next.collection) AND guid = \(next.guid) AND version = \(expectedVersion)
                """)
            guard changed == 1 else { throw try Self.missedWrite(next.collection, next.guid, on: connection) }
            try Self.markRun(mark, on: connection)
            try Self.writeDerived(
                derived, collection: next.collection, guid: next.guid, replacing: true, on: connection)
        }
    }

    public func delete(
        in collection: String, guid: String, expectedVersion: Int64, marking mark: IdempotencyMark?,
        by actor: String?
    ) async throws {
        let deleter = Dialect.recordDeleter(actor, collection: collection, guid: guid)
        let isGroup = collection == collections.groups
        try await database.write { connection in
            if let before = deleter.before { _ = try connection.first(before) { _ in true } }
            let changed = try connection.run(
                """
                DELETE FROM objects WHERE collection = \(collection) AND guid = \(guid)
                AND version = \(expectedVersion)
                """)
            guard changed == 1 else { throw try Self.missedWrite(collection, guid, on: connection) }
            if let after = deleter.after { try connection.run(after) }
            try Self.markRun(mark, on: connection)
            try Self.removeDerived(collection: collection, guid: guid, isGroup: isGroup, on: connection)
        }
    }

    /// Inside an object write's transaction: the request's idempotency key is marked as run.
    public static func markRun(_ mark: IdempotencyMark?, on connection: Connection) throws {
        guard let mark else { return }
        try connection.run(
            "UPDATE idempotency_keys SET ran = " + Dialect.trueLiteral
                + " WHERE scope = \(mark.scope) AND key = \(mark.key)")
    }

    /// Why a write guarded by a version changed no row: the object is gone, or has moved on.
    private static func missedWrite(_ collection: String, _ guid: String, on connection: Connection)
        throws -> StoreError
    {
        let exists =
            try connection.first(
                "SELECT 1 FROM objects WHERE collection = \(collection) AND guid = \(guid)", { _ in true })
            ?? false
        return exists ? .versionChanged : .notFound
    }

    public func list(_ request: ListRequest) async throws -> ListPage {
        var order: [SQL] = request.sort.flatMap { Self.sortTerms($0.field, descending: $0.descending) }
        // Ties break on guid in the direction of the last key, so an index can serve the whole order.
        order.append(
            request.sort.isEmpty ? "id ASC" : request.sort.last!.descending ? "guid DESC" : "guid ASC")
        let condition = try Self.condition(
            request.collection, request.filter, request.restriction, references: request.references)
        let sql: SQL = """
            SELECT document FROM objects WHERE \(condition)
            ORDER BY \(SQL.joined(order, separator: ", ")) LIMIT \(request.count) OFFSET \(request.start)
            """
        // With a total, one snapshot: the page and its total agree.
        let includeTotal = request.includeTotal
        return try await database.pooledRead(
            consistent: includeTotal, measuredBySteps: Self.measuredBySteps(request)
        ) { connection in
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

    /// Metadata sorts on its indexed column; anything else on the JSON value at that path.
    static func sortTerms(_ field: FieldPath, descending: Bool) -> [SQL] {
        if field.components.count == 1, let column = sortColumns[field.components[0]] {
            return [SQL(stringLiteral: column + Dialect.direction(descending: descending))]
        }
        return Dialect.sortTerms(field, descending: descending)
    }

    private static var sortColumns: [String: String] {
        [
            "guid": "guid", "createdAt": "created_at", "updatedAt": "updated_at", "createdBy": "created_by",
            "updatedBy": "updated_by", "version": "version",
        ]
    }

    /// Uniform without sorting the matches: draw row ids in the collection's id range and keep the
    /// first that exists and matches (each match is equally likely on every draw). When matches are
    /// sparse in that range, count them and take one at a random offset instead.
    public func randomPick(_ request: ListRequest) async throws -> ListPage {
        let condition = try Self.condition(
            request.collection, request.filter, request.restriction, references: request.references)
        let (collection, includeTotal) = (request.collection, request.includeTotal)
        // The draws need no snapshot (a row deleted meanwhile is a miss); a total must agree.
        return try await database.pooledRead(
            consistent: includeTotal, measuredBySteps: Self.measuredBySteps(request)
        ) { connection in
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

    private static func randomDocument(
        in collection: String, matching condition: SQL, on connection: Connection
    ) throws -> [UInt8]? {
        guard
            let (low, high) = try connection.first(
                Dialect.idRange(of: collection),
                { row in row.isNull(0) ? nil : (row.integer(0), row.integer(1)) }) ?? nil
        else { return nil }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<randomDraws {
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
    static var randomDraws: Int { 32 }

    /// The condition on `objects` of a collection, a query and an access restriction.
    public static func condition(
        _ collection: String, _ filter: QueryExpression?, _ restriction: QueryExpression? = nil,
        references: ReferenceAccess? = nil
    ) throws -> SQL {
        var condition: SQL = "collection = \(collection)"
        if let filter {
            condition =
                condition + " AND " + (try QueryCompiler<Dialect>.condition(filter, references: references))
        }
        if let restriction {
            condition =
                condition + " AND " + (try QueryCompiler<Dialect>.condition(restriction, references: nil))
        }
        return condition
    }

    public func accessFacts(userGuid: String) async throws -> UserAccessFacts? {
        let facts = Dialect.accessFacts(of: userGuid, in: collections.users)
        return try await database.pointRead { connection in
            try connection.first(facts) { row in
                UserAccessFacts(
                    isAdmin: row.integer(0) == 1, isActive: row.integer(1) == 1,
                    groups: (row.text(2) ?? "").split(separator: "\u{1F}").map(String.init))
            }
        }
    }

    static func text(_ bytes: [UInt8]) -> DatabaseValue {
        .text(String(decoding: bytes, as: UTF8.self))
    }

    static func text(_ bytes: [UInt8]?) -> DatabaseValue {
        bytes.map(text) ?? .null
    }
}

/// Indexes Roost made on one field of one collection, kept by the driver.
extension SQLObjectStore {
    @discardableResult
    public func createIndex(collection: String, field: FieldPath) async throws -> FieldIndex {
        let index = FieldIndex(collection: collection, field: field)
        try await database.write { connection in try connection.createFieldIndex(index, on: field) }
        return index
    }

    public func dropIndex(collection: String, field: FieldPath) async throws -> Bool {
        let index = FieldIndex(collection: collection, field: field)
        return try await database.write { connection in try connection.dropFieldIndex(index) }
    }

    public func fieldIndexes() async throws -> [FieldIndex] {
        try await database.pointRead { connection in try connection.fieldIndexes() }
    }
}
