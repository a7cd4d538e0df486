import RoostStore

/// ``SharedDefinitionStore`` on PostgreSQL: one row with the definition's text and a revision
/// that grows with each change, announced with `NOTIFY roost_app_definition` at commit.
public final class PostgresDefinitionStore: SharedDefinitionStore {
    let database: PostgresDatabase
    private let listener: PostgresListener?

    /// The channel a change of the stored definition notifies.
    public static let channel = "roost_app_definition"

    /// `listener` hears other instances' changes; without one, observers are never called.
    public init(database: PostgresDatabase, listener: PostgresListener?) {
        self.database = database
        self.listener = listener
    }

    public func storedDefinition() async throws -> (revision: Int64, text: [UInt8])? {
        try await database.read { connection in
            try connection.first("SELECT revision, text FROM roost_app_definition WHERE id = 1") {
                (revision: $0.integer(0), text: $0.bytes(1))
            }
        }
    }

    @discardableResult
    public func storeDefinition(_ text: [UInt8], at now: Int64) async throws -> Int64 {
        let value = String(decoding: text, as: UTF8.self)
        return try await database.write { connection in
            // The row lock orders concurrent applies; an unchanged text keeps its revision.
            if let (revision, stored) = try connection.first(
                "SELECT revision, text FROM roost_app_definition WHERE id = 1 FOR UPDATE",
                { ($0.integer(0), $0.text(1) ?? "") })
            {
                if stored == value { return revision }
                try connection.run(
                    """
                    UPDATE roost_app_definition SET revision = \(revision + 1), text = \(value), applied_at = \(now)
                    WHERE id = 1
                    """)
                try connection.execute("NOTIFY \(Self.channel)")
                return revision + 1
            }
            try connection.run(
                "INSERT INTO roost_app_definition (id, revision, text, applied_at) VALUES (1, 1, \(value), \(now))"
            )
            try connection.execute("NOTIFY \(Self.channel)")
            return 1
        }
    }

    public func observeChanges(_ observer: @escaping @Sendable () -> Void) {
        listener?.onNotification(Self.channel, observer)
    }
}
