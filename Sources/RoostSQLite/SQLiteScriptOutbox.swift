import RoostStore

/// ``ScriptOutboxStore`` on the SQLite database.
public typealias SQLiteScriptOutbox = SQLScriptOutbox<SQLiteDatabase>

extension SQLScriptOutbox where Database == SQLiteDatabase {
    static var migrations: [Migration] {
        [
            Migration(
                version: 25, name: "script outbox",
                sql: ScriptOutboxSQL.schema(start: "coalesce((SELECT max(seq) FROM changes), 0)")),
            Migration(
                version: 26, name: "given-up script runs by sequence", sql: ScriptOutboxSQL.givenUpIndex),
            Migration(
                version: 28, name: "failed script runs keep who deleted", sql: ScriptOutboxSQL.deleterColumn),
        ]
    }
}
