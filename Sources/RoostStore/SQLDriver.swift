import RoostQuery

/// A row of a query result, as every driver reads one: what the stores written once read of
/// SQLite's rows and PostgreSQL's.
public protocol DatabaseRow {
    func isNull(_ column: Int) -> Bool
    func text(_ column: Int) -> String?
    func integer(_ column: Int) -> Int64
    func bytes(_ column: Int) -> [UInt8]
}

/// A connection that runs bound SQL: SQLite's and PostgreSQL's, so the outbox's statements are
/// written once for both.
public protocol SQLRunning {
    associatedtype ResultRow: DatabaseRow
    func query<T>(_ sql: SQL, _ row: (ResultRow) throws -> T) throws -> [T]
    func first<T>(_ sql: SQL, _ row: (ResultRow) throws -> T) throws -> T?
    @discardableResult func run(_ sql: SQL) throws -> Int
}

/// A connection a store written once runs its statements on: SQLite's and PostgreSQL's. It is
/// lent to a closure for the length of one read or write, never kept.
public protocol SQLConnection: SQLRunning {
    /// The SQL this connection speaks where the databases differ.
    associatedtype Dialect: SQLDialect
    /// Runs statements without parameters (DDL, several statements at once).
    func execute(_ text: String) throws
    /// Whether `error`, thrown by a statement, is a unique constraint violation.
    static func isUniqueViolation(_ error: any Error) -> Bool

    /// Creates a field index if it does not exist (in a write): DDL and catalogs are the
    /// driver's own.
    func createFieldIndex(_ index: FieldIndex, on field: FieldPath) throws
    /// Drops a field index (in a write); false if there was none.
    func dropFieldIndex(_ index: FieldIndex) throws -> Bool
    /// The field indexes, by name.
    func fieldIndexes() throws -> [FieldIndex]
}

/// A database the stores written once run on: how it lends its connections.
public protocol SQLDatabase: Sendable {
    associatedtype Connection: SQLConnection
    /// A bounded point lookup (one or two statements on an index), outside a transaction: it may
    /// run on the calling thread.
    func pointRead<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T
    /// A read whose cost a client controls (a list, a count, a random pick), off the event loops
    /// and under the read deadline. `consistent`: its statements read one snapshot (a page and
    /// its total agree). `measuredBySteps` false: its cost hides from SQLite's step count (a
    /// regular expression), so it must not start on the calling thread.
    func pooledRead<T: Sendable>(
        consistent: Bool, measuredBySteps: Bool, _ body: @escaping @Sendable (Connection) throws -> T
    ) async throws -> T
    /// Runs `body` in a write transaction; returns once it has committed. A body that throws
    /// leaves nothing behind.
    func write<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T
}

/// The locks a transaction takes where a database has more than one writer: what SQLite's single
/// writer gives for free.
public enum TransactionLock: Int, Sendable {
    /// A blob digest: writes referring to it share it, its removal takes it alone.
    case blob = 0x526F_6F73  // "Roos"
    /// A field index being created, by name.
    case fieldIndex
    /// The app's declared groups, while they are ensured.
    case groups
    /// A user's sessions, while a login replaces tokens or a password change revokes them.
    case sessions
}

/// Where SQLite's SQL and PostgreSQL's differ, for the stores and the query compiler written
/// once: JSON paths, booleans, regular expressions, sort keys, locks. Everything else is
/// the same text on both.
public protocol SQLDialect: Sendable {
    /// The literal true and false of a condition.
    static var trueLiteral: SQL { get }
    static var falseLiteral: SQL { get }
    /// The larger of two values (`max` in SQLite, `greatest` in PostgreSQL).
    static var greatest: String { get }

    /// `field` (a string) matches `pattern`, a regular expression already checked by
    /// ``BoundedRegex``.
    static func regex(_ field: FieldPath, matching pattern: String) throws(QueryError) -> SQL
    /// A comparison of the JSON value at `field` with a literal: false for a missing field or a
    /// value of another type, never NULL; `comparison` is not `ne`.
    static func jsonComparison(
        _ field: FieldPath, _ comparison: ComparisonOperator, symbol: String, _ literal: QueryLiteral
    ) -> SQL
    /// An integer metadata column against a number literal.
    static func integerColumn(_ column: String, symbol: String, number: String) -> SQL
    /// `contains_any` / `contains_all` on an array or a string of words.
    static func contains(_ field: FieldPath, _ mode: ContainsMode, _ words: [String]) -> SQL
    /// The referenced row was created by `viewer`.
    static func createdBy(_ viewer: String) -> SQL

    /// The ORDER BY terms of a sort on a JSON field, in the order SQLite's values sort.
    static func sortTerms(_ field: FieldPath, descending: Bool) -> [SQL]
    /// The direction of a sort on a metadata column, nulls first when ascending.
    static func direction(descending: Bool) -> String
    /// One row: the least and the greatest `id` of the collection (NULLs when it is empty).
    static func idRange(of collection: String) -> SQL
    /// One row for a user object in `users`: is admin (1 or 0), is active (1 or 0), its groups
    /// joined by U+001F.
    static func accessFacts(of userGuid: String, in users: String) -> SQL

    /// Statements around deleting an object that record who deleted it (nil: nobody named) in the
    /// change log.
    static func recordDeleter(_ actor: String?, collection: String, guid: String) -> (
        before: SQL?, after: SQL?
    )
    /// What follows a SELECT to lock the rows it reads until the transaction ends ("" where one
    /// writer holds them all).
    static var rowLock: String { get }
    /// The database's wall-clock milliseconds now, as an SQL expression (instances' clocks may
    /// differ; the database's is the one they share).
    static var clock: String { get }
    /// The change log's last sequence number, as an SQL expression (a log trimmed to nothing
    /// still knows it where the driver keeps a counter).
    static var lastChangeSequence: String { get }
    /// A query of the names of the tables in the database's schema.
    static var tableNames: String { get }
    /// Creates `roost_schema` and `roost_meta` if they do not exist.
    static var migrationTables: String { get }
    /// Opens a write transaction (one a migration runs in).
    static var beginWrite: String { get }
    /// The column that orders tokens issued in the same millisecond.
    static var tokenIssueOrder: String { get }
    /// The document's top-level `field` holds the JSON value `literal` (`true`, `false`).
    static func documentField(_ field: String, is literal: String) -> String

    /// Takes a transaction's lock on `key` of `kind`; nil where one writer needs none.
    static func lock(_ kind: TransactionLock, _ key: String, shared: Bool) -> SQL?
}

extension SQLConnection {
    /// Takes the transaction's lock the dialect needs, if any.
    public func lock(_ kind: TransactionLock, _ key: String, shared: Bool = false) throws {
        guard let sql = Dialect.lock(kind, key, shared: shared) else { return }
        _ = try first(sql) { _ in true }
    }
}
