import RoostStore

extension PostgresConnection: SQLRunning {}

/// ``ScriptOutboxStore`` on PostgreSQL, shared by every instance.
public typealias PostgresScriptOutbox = SQLScriptOutbox<PostgresDatabase>

extension SQLScriptOutbox where Database == PostgresDatabase {
    /// The outbox: 70–79.
    public static var migrations: [Migration] {
        [
            Migration(
                version: 70, name: "script outbox",
                sql: ScriptOutboxSQL.schema(start: "(SELECT seq FROM change_counter WHERE id = 1)")),
            Migration(
                version: 71, name: "given-up script runs by sequence", sql: ScriptOutboxSQL.givenUpIndex),
            Migration(
                version: 72, name: "failed script runs keep who deleted", sql: ScriptOutboxSQL.deleterColumn),
        ]
    }
}
