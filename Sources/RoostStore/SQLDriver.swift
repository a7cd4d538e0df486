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
