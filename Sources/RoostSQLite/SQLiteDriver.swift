import RoostStore

extension Row: DatabaseRow {
    public func isNull(_ column: Int) -> Bool { isNull(Int32(column)) }
    public func text(_ column: Int) -> String? { text(Int32(column)) }
    public func integer(_ column: Int) -> Int64 { integer(Int32(column)) }
    public func bytes(_ column: Int) -> [UInt8] { bytes(Int32(column)) }
}

extension SQLiteConnection: SQLConnection {
    public typealias Dialect = SQLiteDialect

    public static func isUniqueViolation(_ error: any Error) -> Bool {
        (error as? SQLiteError)?.isUniqueViolation ?? false
    }
}

extension SQLiteDatabase: SQLDatabase {
    /// On the calling thread, with an idle reader connection.
    public func pointRead<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T)
        async throws
        -> T
    {
        try read(body)
    }

    public func pooledRead<T: Sendable>(
        consistent: Bool, measuredBySteps: Bool, _ body: @escaping @Sendable (SQLiteConnection) throws -> T
    ) async throws -> T {
        try await pooledRead(transaction: consistent, inline: measuredBySteps, body)
    }
}
