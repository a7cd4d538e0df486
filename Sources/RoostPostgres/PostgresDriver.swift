import RoostQuery
import RoostStore

extension PostgresConnection: SQLConnection {
    public typealias Dialect = PostgresDialect

    public static func isUniqueViolation(_ error: any Error) -> Bool {
        (error as? PostgresError)?.isUniqueViolation ?? false
    }
}

extension PostgresDatabase: SQLDatabase {
    public func pointRead<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T)
        async throws -> T
    {
        try await read(body)
    }

    /// One REPEATABLE READ snapshot when `consistent`; PostgreSQL's statement timeout bounds the
    /// rest, so `measuredBySteps` does not matter here.
    public func pooledRead<T: Sendable>(
        consistent: Bool, measuredBySteps: Bool, _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        try await Self.refusingBadPatterns {
            consistent ? try await snapshotRead(body) : try await read(body)
        }
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
}
