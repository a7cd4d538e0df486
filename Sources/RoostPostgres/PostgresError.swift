/// A failure reported by PostgreSQL or libpq. Its message is the server's primary message (or
/// libpq's, with the password scrubbed): never bound values, never the password.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// The SQLSTATE code, e.g. "23505"; nil when the failure happened before or outside the server.
    public let sqlState: String?
    public let message: String
    /// Whether the connection itself failed (the server is gone, shut down, or unreachable),
    /// rather than the statement.
    public let isConnectionFailure: Bool

    public init(sqlState: String? = nil, message: String, isConnectionFailure: Bool = false) {
        self.sqlState = sqlState
        self.message = message
        self.isConnectionFailure = isConnectionFailure || Self.meansConnectionLost(sqlState)
    }

    /// A UNIQUE or PRIMARY KEY constraint failed (23505).
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// A bound text value held U+0000, which PostgreSQL's text cannot (22021, or 22P05 for jsonb).
    public var isUnstorableText: Bool { sqlState == "22021" || sqlState == "22P05" }

    /// The statement was stopped: by `statement_timeout` or by a cancel request (57014).
    public var isQueryCanceled: Bool { sqlState == "57014" }

    public var description: String {
        "PostgreSQL error" + (sqlState.map { " \($0)" } ?? "") + ": " + message
    }

    /// Class 08 (connection exception) and the shutdown codes of class 57 (57P01 admin shutdown,
    /// 57P02 crash shutdown, 57P03 cannot connect now).
    private static func meansConnectionLost(_ sqlState: String?) -> Bool {
        guard let sqlState else { return false }
        return sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(sqlState)
    }
}
