import RoostStore

extension PostgresConnection: SQLRunning {}

/// ``ScriptOutboxStore`` on PostgreSQL, shared by every instance.
public typealias PostgresScriptOutbox = SQLScriptOutbox<PostgresDatabase>
