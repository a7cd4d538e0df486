import RoostQuery

/// ``CollectionBrowsing`` written once for SQLite and PostgreSQL: the statements are the same
/// text on both (a recursive skip over the `(collection, …)` index, counts bounded by a
/// `LIMIT` subquery, seeks on `objects_by_id`).
extension SQLObjectStore: CollectionBrowsing {
    public func collections(limit: Int, countLimit: Int?) async throws -> [CollectionSummary] {
        // Each step seeks the next name on the index: `limit` seeks, not a scan of every row.
        let names: SQL = """
            WITH RECURSIVE names(name, n) AS (
                SELECT min(collection), 1 FROM objects
                UNION ALL
                SELECT (SELECT min(collection) FROM objects WHERE collection > names.name), n + 1
                FROM names WHERE names.name IS NOT NULL AND n < \(Int64(limit))
            )
            SELECT name FROM names WHERE name IS NOT NULL ORDER BY n
            """
        return try await database.pooledRead(consistent: true, measuredBySteps: true) { connection in
            try connection.query(names) { $0.text(0) ?? "" }.map { name in
                let counted: SQL
                if let countLimit {
                    counted = """
                        SELECT count(*) FROM (SELECT 1 FROM objects WHERE collection = \(name)
                        LIMIT \(Int64(countLimit) + 1)) AS capped
                        """
                } else {
                    counted = "SELECT count(*) FROM objects WHERE collection = \(name)"
                }
                let count = Int(try connection.first(counted) { $0.integer(0) } ?? 0)
                guard let countLimit, count > countLimit else {
                    return CollectionSummary(name: name, count: count, exact: true)
                }
                return CollectionSummary(name: name, count: countLimit + 1, exact: false)
            }
        }
    }

    public func page(_ request: KeysetRequest) async throws -> [PositionedDocument] {
        var condition = try Self.condition(
            request.collection, request.filter, nil, references: request.references)
        let order: SQL
        switch request.direction {
        case .after(let position?):
            condition = condition + " AND id > \(position)"
            order = "id ASC"
        case .after(nil):
            order = "id ASC"
        case .before(let position):
            condition = condition + " AND id < \(position)"
            order = "id DESC"
        }
        let sql: SQL = """
            SELECT id, document FROM objects WHERE \(condition)
            ORDER BY \(order) LIMIT \(Int64(request.limit) + 1)
            """
        let measured = request.filter.map { QueryShape($0).regularExpressions == 0 } ?? true
        let rows = try await database.pooledRead(consistent: false, measuredBySteps: measured) { connection in
            try connection.query(sql) { PositionedDocument(position: $0.integer(0), document: $0.bytes(1)) }
        }
        if case .before = request.direction { return rows.reversed() }
        return rows
    }
}
