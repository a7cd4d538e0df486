import RoostStore

/// ``ScriptOutboxStore`` on the SQLite database.
public typealias SQLiteScriptOutbox = SQLScriptOutbox<SQLiteDatabase>
